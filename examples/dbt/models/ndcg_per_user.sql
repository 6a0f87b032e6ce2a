{{ ndcg_duck.per_user(ref('recs_long'), ref('relevance'), layout='ranks', k=10) }}
