{{ ndcg_duck.compare_per_user(ref('recs_new_long'), ref('recs_long'), ref('relevance'),
                              layout='ranks', k=10) }}
