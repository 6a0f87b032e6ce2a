{{ ndcg_duck.compare(ref('recs_new_long'), ref('recs_long'), ref('relevance'), layout='ranks',
                     k=10) }}
