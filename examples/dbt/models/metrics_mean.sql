{{ ndcg_duck.metrics_mean(ref('recs_long'), ref('relevance'), layout='ranks', k=10) }}
