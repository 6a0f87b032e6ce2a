{#- The macros of sql/ndcg.sql, read from that one file at run time: nothing here copies them.

    dbt-duckdb gives each thread its own cursor, and a TEMP macro lives in one cursor only, so
    the hook defines them as `ndcg-duck sql --persistent` does (CREATE OR REPLACE MACRO, kept in
    the target database, replaced on every run): the same two rewrites as
    ndcg_duck.sqlfiles.script(persistent=True); tests/doors/test_dbt.py checks that the script the
    hook ran is that one, character for character. -#}

{#- sql_path(): where sql/ndcg.sql is: the var ndcg_duck_sql, or else the file beside this
    package in the repository it came from (dbt deps links a local package into dbt_packages/). -#}
{% macro sql_path() %}
  {%- set project_dir = invocation_args_dict.get('project_dir') or '.' -%}
  {{- return(var('ndcg_duck_sql', project_dir ~ '/dbt_packages/ndcg_duck/../../sql/ndcg.sql')) -}}
{% endmacro %}

{#- register(): the on-run-start hook: renders to the macro script, which dbt then runs. -#}
{% macro register() %}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- set path = ndcg_duck.sql_path() -%}
  {%- set found = run_query("SELECT count(*) FROM glob(" ~ ndcg_duck.sql_text(path) ~ ")") -%}
  {%- if found.columns[0].values()[0] == 0 -%}
    {{ exceptions.raise_compiler_error(
         "ndcg_duck: no file " ~ path ~ ": set the var ndcg_duck_sql to the path of sql/ndcg.sql "
         ~ "(in the ndcg-duck repository, or written by `ndcg-duck sql > ndcg.sql`)") }}
  {%- endif -%}
  {%- set script = run_query("SELECT content FROM read_text(" ~ ndcg_duck.sql_text(path) ~ ")")
                   .columns[0].values()[0] -%}
  {%- set re = modules.re -%}
  {#- a macro with typed parameters, which a database file cannot keep, gives way to the line
      `-- persistent: ...` after it; then TEMP macros become kept ones -#}
  {%- set script = re.sub("(?m)^CREATE OR REPLACE TEMP MACRO [^;]*;\n-- persistent: (.*)$",
                          "\\1", script) -%}
  {%- set script = re.sub("(?m)^CREATE OR REPLACE TEMP MACRO ", "CREATE OR REPLACE MACRO ",
                          script) -%}
  {{- return(script) -}}
{% endmacro %}
