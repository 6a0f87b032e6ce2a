{#- SQL text from Jinja values. -#}

{#- sql_text(value): a string (or a relation, as ref() gives it: "db"."main"."recs") as a SQL
    string literal. -#}
{% macro sql_text(value) %}
  {{- return("'" ~ (value | string | replace("'", "''")) ~ "'") -}}
{% endmacro %}

{#- sql_value(value, option): an option's value as SQL: none is NULL, true and false,
    numbers, strings quoted, a dict a MAP (gain_map={1: 3, 2: 9}). -#}
{% macro sql_value(value, option) %}
  {%- if value is none -%}{{ return('NULL') }}
  {%- elif value is sameas true or value is sameas false -%}{{ return(value | string | lower) }}
  {%- elif value is number -%}{{ return(value | string) }}
  {%- elif value is string -%}{{ return(ndcg_duck.sql_text(value)) }}
  {%- elif value is mapping -%}
    {%- set pairs = [] -%}
    {%- for level, gain in value.items() -%}
      {%- do pairs.append(ndcg_duck.sql_value(level, option) ~ ': ' ~ ndcg_duck.sql_value(gain, option)) -%}
    {%- endfor -%}
    {{- return('MAP {' ~ pairs | join(', ') ~ '}') -}}
  {%- else -%}
    {{ exceptions.raise_compiler_error("ndcg_duck: " ~ option ~ "=" ~ value
         ~ " is not a number, string, true/false, none or a dict (gain_map)") }}
  {%- endif -%}
{% endmacro %}
