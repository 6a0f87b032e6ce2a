{{ ndcg_duck.mean(ref('recs_long'), ref('relevance'), layout='ranks', k=5, gain='exponential',
                  gain_map={3: 10}, judged_only=true, missing='skip') }}
