{#- dbt macros over the table macros of sql/ndcg.sql: each renders a SELECT for a model.
    recs and rels are relations (ref('recs'), source(...)) or table names; layout says how recs
    holds the rankings: 'lists' (user_id, items), 'ranks' (user_id, item_id, rank) or 'scores'
    (user_id, item_id, score); every other keyword is the SQL macro's named option, with the
    same name and values (k=10, gain='exponential', gain_map={1: 3}, missing='skip', ...). -#}

{#- per_user(recs, rels, layout='lists', **options): ndcg_per_user: user_id, dcg, idcg, ndcg. -#}
{% macro per_user(recs, rels, layout='lists') %}
  {{- return(ndcg_duck.select_from('ndcg_per_user', recs, rels, layout, kwargs)) -}}
{% endmacro %}

{#- mean(recs, rels, layout='lists', **options): ndcg_mean: ndcg (the mean), users. -#}
{% macro mean(recs, rels, layout='lists') %}
  {{- return(ndcg_duck.select_from('ndcg_mean', recs, rels, layout, kwargs)) -}}
{% endmacro %}

{#- metrics_per_user(...): ndcg_metrics_per_user: user_id, metric ('recall@10', ...), value. -#}
{% macro metrics_per_user(recs, rels, layout='lists') %}
  {{- return(ndcg_duck.select_from('ndcg_metrics_per_user', recs, rels, layout, kwargs)) -}}
{% endmacro %}

{#- metrics_mean(...): ndcg_metrics_mean: metric, value (the mean; a sum for num_rel and
    num_rel_ret), users. -#}
{% macro metrics_mean(recs, rels, layout='lists') %}
  {{- return(ndcg_duck.select_from('ndcg_metrics_mean', recs, rels, layout, kwargs)) -}}
{% endmacro %}

{#- compare_per_user(recs, baseline, rels, layout='lists', **options): two runs scored with the
    same options and paired on the user, as `ndcg-duck compare` pairs them (ndcg_pairs):
    user_id, baseline (the baseline's ndcg), ndcg (the run's), difference (run - baseline). -#}
{% macro compare_per_user(recs, baseline, rels, layout='lists') %}
  {{- return("WITH ndcg_run_ AS (FROM " ~ ndcg_duck.table_call('ndcg_per_user', recs, rels, layout, kwargs)
             ~ "),\nndcg_baseline_ AS (FROM " ~ ndcg_duck.table_call('ndcg_per_user', baseline, rels, layout, kwargs)
             ~ ")\nSELECT * FROM ndcg_pairs('ndcg_run_', 'ndcg_baseline_')") -}}
{% endmacro %}

{#- compare(recs, baseline, rels, ...): what a paired comparison needs, over compare_per_user's
    users (ndcg_paired): users, mean, var, base_mean, base_var, diff_mean, diff_var, wins, ties,
    losses. -#}
{% macro compare(recs, baseline, rels, layout='lists') %}
  {{- return("SELECT paired.* FROM (SELECT ndcg_paired(ndcg, baseline) AS paired FROM (\n"
             ~ ndcg_duck.compare_per_user(recs, baseline, rels, layout, **kwargs) ~ "\n))") -}}
{% endmacro %}

{#- select_from(macro, recs, rels, layout, options): SELECT * FROM the layout's form of the macro. -#}
{% macro select_from(macro, recs, rels, layout, options) %}
  {{- return("SELECT * FROM " ~ ndcg_duck.table_call(macro, recs, rels, layout, options)) -}}
{% endmacro %}

{#- table_call(macro, recs, rels, layout, options): the call of the layout's form of the macro
    (ndcg_per_user, ndcg_per_user_ranks, ndcg_per_user_scores) with recs and rels by name and
    the options named. An option the SQL macro does not take stops the compile, listing those
    it takes (read from the database, so they are the macro's own). -#}
{% macro table_call(macro, recs, rels, layout, options) %}
  {%- set suffixes = {'lists': '', 'ranks': '_ranks', 'scores': '_scores'} -%}
  {%- if layout not in suffixes -%}
    {{ exceptions.raise_compiler_error("ndcg_duck: layout=" ~ layout
         ~ " is not one of lists, ranks, scores (recs: user_id, items / item_id, rank / item_id, score)") }}
  {%- endif -%}
  {%- set name = macro ~ suffixes[layout] -%}
  {%- if execute -%}
    {%- set found = run_query("SELECT array_to_string(parameters[3:], ', ') FROM duckdb_functions() "
                              ~ "WHERE function_name = " ~ ndcg_duck.sql_text(name) ~ " LIMIT 1") -%}
    {%- if found.rows | length > 0 -%}
      {%- set known = found.columns[0].values()[0].split(', ') -%}
      {%- for option in options if option not in known -%}
        {{ exceptions.raise_compiler_error("ndcg_duck: " ~ name ~ " has no option " ~ option
             ~ "; its options: " ~ known | join(', ')) }}
      {%- endfor -%}
    {%- endif -%}
  {%- endif -%}
  {%- set args = [ndcg_duck.sql_text(recs), ndcg_duck.sql_text(rels)] -%}
  {%- for option, value in options.items() -%}
    {%- do args.append(option ~ ' := ' ~ ndcg_duck.sql_value(value, option)) -%}
  {%- endfor -%}
  {{- return(name ~ '(' ~ args | join(', ') ~ ')') -}}
{% endmacro %}
