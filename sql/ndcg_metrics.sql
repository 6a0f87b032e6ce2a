-- The metrics people report beside NDCG, from the same per-user gains the core finds.
--
-- For one user: the ranked items, best first, at ranks 1, 2, ...; g_i, the gain of the item at
-- rank i (0 if it is not judged); "relevant" means relevance > 0, or >= min_relevance when given
-- (trec_eval -l); R, the user's number of relevant judgments, ranked or not; p_1 < p_2 < ...,
-- the ranks of the relevant ranked items; found(k) = #{j : p_j <= k}, how many are in the first
-- k. With no cutoff, k is the whole ranking.
--   cg@k        = sum_{i <= k} g_i              cumulated gain (Jarvelin and Kekalainen 2002, CG)
--   precision@k = found(k) / k                  trec_eval P_k: a ranking shorter than k counts
--                                               the missing ranks as not relevant
--   recall@k    = found(k) / R                  trec_eval recall_k
--   hit_rate@k  = 1 if found(k) > 0, else 0     trec_eval success_k (Tomlinson)
--   mrr@k       = 1 / p_1 if p_1 <= k, else 0   trec_eval recip_rank, ir_measures RR@k
--   map@k       = sum_{j <= found(k)} (j / p_j) / R
--                 the precision at each relevant ranked item (j / p_j = precision@p_j), summed
--                 and divided by every relevant judgment: trec_eval map and map_cut_k (Buckley
--                 and Voorhees, "Retrieval System Evaluation", 2005)
--   r_precision = found(R) / R                  trec_eval Rprec: precision at rank R
--   num_rel     = R; num_rel_ret = found(whole ranking)        trec_eval num_rel, num_rel_ret
--   judged@k    = judged(k) / min(k, n)         ir_measures Judged@k (its judged provider, from
--                 OpenNIR): judged(k), how many of the first k have a judgment of any relevance
--                 (0 and negative ones too); n, the ranking's length (0 when n is 0)
--   ncg@k       = cg@k / icg@k                  normalised cumulated gain (Jarvelin and
--                 Kekalainen 2002, nCG): icg@k, the sum of the first k ideal gains (the user's
--                 gains, best first; the first min(k, n) with idcg_cutoff 'list'); 0 when icg@k
--                 is 0; gain and gain_map as for NDCG
--   err@k       = sum_{i <= k} (r_i / i) * prod_{j < i} (1 - r_j),  r_i = (2^g_i - 1) / 2^4
--                 expected reciprocal rank (Chapelle, Metzler, Zhang and Grinspan 2009, CIKM) as
--                 gdeval.pl computes it (the TREC Web track's script, which ir_measures runs
--                 for ERR@k): g_i, the grade at rank i, is the relevance of a relevant item and 0
--                 otherwise (gain and gain_map do not apply); 4 is gdeval's largest grade, and a
--                 relevance above it stops (ndcg_err_graded); each term is added in rank order
--   bpref       = sum_{j} (1 - min(n_j, R) / min(N, R)) / R   (a term 1 when n_j = 0)
--                 trec_eval bpref (Buckley and Voorhees, "Retrieval evaluation with incomplete
--                 information", SIGIR 2004): over the relevant ranked items j, n_j the judged
--                 nonrelevant items (relevance >= 0, not relevant) ranked above j, N how many
--                 the user has; unjudged and negatively judged items count for nothing
--   rbp         = (1 - p) sum_i (l_i / max(L, 1)) p^(i - 1)
--                 rank-biased precision (Moffat and Zobel, ACM TOIS 27(1), 2008) as trec_eval's
--                 rbp computes it: over the whole ranking, l_i the relevance at rank i (0 for an
--                 item not judged or judged below 0), L the user's largest relevance: levels
--                 above 1 are scaled to [0, 1]; p the persistence (rbp_p, trec_eval rbp.p,
--                 default 0.9). Like trec_eval it ignores min_relevance, gain and gain_map
-- trec_eval's set and count measures (its m_num_ret.c, m_num_nonrel_judged_ret.c, m_set_P.c,
-- m_set_rel_P.c, m_set_map.c, m_set_F.c, m_rel_P.c), over the whole ranking (after max_depth and
-- judged_only, as trec_eval's -M and -J): n, the ranking's length; F = found(n), its relevant
-- items (num_rel_ret); P = F / n and Rc = F / R:
--   num_ret     = n (summed over users, as trec_eval sums it)          trec_eval num_ret
--   num_nonrel_judged_ret = the ranked items judged >= 0 but not relevant (summed)
--                 trec_eval num_nonrel_judged_ret (an item judged below 0 counts as unjudged)
--   set_precision = F / n, 0 when n is 0          trec_eval set_P, ir_measures SetP
--   set_relative_precision = F / min(n, R), 0 when n or R is 0
--                 trec_eval set_relative_P, ir_measures SetP(relative=True)
--   set_map     = F^2 / (n R), 0 when n or R is 0  trec_eval set_map, ir_measures SetAP
--   set_f       = (b + 1) P Rc / (b P + Rc), 0 when F is 0   trec_eval set_F (van Rijsbergen's
--                 F, "Information Retrieval", 1979), ir_measures SetF; b the relative importance
--                 of recall (set_f_beta, trec_eval set_F.b, default 1: the harmonic mean)
--   relative_precision@k = found(k) / min(k, R), 0 when R is 0   trec_eval relative_P_k:
--                 precision@k up to R, recall@k beyond it
--   iprec_11pt_avg = (1/11) sum_{x in 0, 0.1, ..., 1} iprec(x)   trec_eval 11pt_avg (m_11pt_avg.c,
--                 m_iprec_at_recall.c): iprec(x), the interpolated precision at recall x, is the
--                 largest j / p_j over j >= max(c, 1), c = round(x R) (halves away from 0), and 0
--                 when c > F (fewer relevant items ranked than recall x needs)
--   gm_map      = ln(max(map, 0.00001)) per user; the summary is exp of their mean, the
--                 geometric mean of map (each user's floored at 0.00001, trec_eval's
--                 MIN_GEO_MEAN, so that one user at 0 does not make it 0)   trec_eval gm_map
--                 (m_gm_map.c, meas_avg.c te_calc_avg_meas_s_gm); map over the whole ranking
--   gm_bpref    = ln(max(bpref, 0.00001)) per user, summed up as gm_map   trec_eval gm_bpref
--   iprec_at_recall_x = iprec(x) (see iprec_11pt_avg)   trec_eval iprec_at_recall.x,
--                 ir_measures IPrec@x; trec_eval's levels x = 0, 0.1, ..., 1
--   rprec_mult_x = found(c) / c, c = floor(x R + 0.9) (0 when c is 0): precision at x times R
--                 (a ranking shorter than c counts the missing ranks as not relevant)
--                 trec_eval Rprec_mult.x (m_Rprec_mult.c); its multiples x = 0.2, 0.4, ..., 2
-- trec_eval's other per-query measures (its m_infap.c, m_Rndcg.c, m_ndcg_rel.c, m_rbp_resid.c,
-- m_utility.c, m_unjudged.c, m_G.c, m_binG.c), over the whole ranking but unj@k. "Unjudged" is
-- trec_eval's: an item not in the judgments, or judged below 0 (in its pool, not judged: how
-- qrels mark a sampled pool's unjudged documents); u_i = 1 for such an item at rank i. g_i is the
-- gain at rank i and I_1 >= I_2 >= ... >= I_G > 0 the user's positive gains (the ideal ranking,
-- never cut), as for NDCG (gain, gain_map, min_relevance); D_i = sum_{j <= i} g_j / log2(j + 1)
-- and ID_i the same of the I_j (DCG and ideal DCG at i; ID_i = ID_G beyond G):
--   infap       = sum_{j} (1 + (J_j - 1) (j - 1 + e) / (j - 1 + m_j + 2e)) / p_j / R
--                 inferred AP (Yilmaz and Aslam, "Estimating average precision with incomplete
--                 and imperfect judgments", CIKM 2006) as trec_eval's infAP computes it: over the
--                 relevant ranked items j (at rank p_j), J_j the judged items (any relevance,
--                 below 0 too) in the first p_j, m_j the judged nonrelevant ones (>= 0) above p_j,
--                 e = 0.00001; items not in the judgments count only as ranks
--   rndcg       = the mean of D_min(b, n) / ID_b over the ideal's level changes b (the b <= G
--                 where I_b != I_(b+1), I_(G+1) = 0), and of D_n / ID_G when n >= G + 2
--                 trec_eval Rndcg (nDCG averaged at the R-levels of each gain, Jarvelin and
--                 Kekalainen 2002); 0 when R or G is 0
--   ndcg_rel    = (sum_{i: g_i > 0} D_i / ID_i + (G - #{i : g_i > 0}) D_n / ID_G) / G
--                 trec_eval ndcg_rel (nDCG averaged over the relevant items, those with a gain
--                 > 0; one not ranked counts the whole ranking's nDCG); 0 when that sum is <= 0
--   rbp_resid   = p^n + (1 - p) sum_i u_i p^(i - 1)      trec_eval rbp_resid (Moffat and Zobel
--                 2008): what RBP could still gain if every unjudged ranked item were relevant,
--                 with the persistence p of rbp (rbp_p); 0, as in trec_eval, when no ranked item
--                 is unjudged. Computed as 1 - (1 - p) sum_i (1 - u_i) p^(i - 1), over the judged
--                 ranks (the weights (1 - p) p^(i - 1) of ranks 1 .. n add up to 1 - p^n)
--   utility     = w1 F + w2 (n - F) + w3 (R - F) + w4 (D + F - n - R)   trec_eval utility: the
--                 weights w (utility_weights, trec_eval utility.w1,w2,w3,w4, default 1, -1, 0,
--                 0) of the relevant and nonrelevant items ranked and not ranked, D the documents
--                 in the collection (num_docs, trec_eval -N, default 0); 0 for a user without a
--                 ranking (trec_eval -c scores such a query 0)
--   unj@k       = #{i <= k : u_i} / k                  trec_eval unj_k: the unjudged share of the
--                 first k ranks, the ranks past the ranking counting as judged
--   g           = sum_i g_i / log2(2 + C_i - S_i) / sum_j I_j   trec_eval G: C_i = sum_{j <= i}
--                 max(I_j, 1) (I_j = 0 beyond G), S_i = sum_{j <= i} g_j; 0 when G is 0
--   bing        = sum_{j} 1 / log2(2 + p_j - j) / R    trec_eval binG: p_j - j, the items that
--                 are not relevant above the j-th relevant ranked item
-- infap, bing, unj and rbp_resid read relevance as the other counting measures (min_relevance);
-- rndcg, ndcg_rel and g read the gains as NDCG does, where trec_eval's read the relevance levels
-- (or its LEVEL=GAIN parameters, as --gain-map) whatever -l says: give those no min_relevance to
-- match it.
-- Every ratio is 0 when its denominator (R) is 0, as in trec_eval, which evaluates such a user
-- all the same. DCG, ideal DCG and NDCG are the core's (ndcg_core.sql), and so is what each
-- metric reads (ndcg_user_gains, after max_depth and judged_only, where the items below an
-- unjudged item move up; relevant and R from the judgments edge, ndcg_judgments): the judged
-- ranked items, a few of each ranking, with their ranks, gains and relevances in rank order.
-- Every sum above over ranks i is a sum over those (an item not judged has g_i = l_i = 0 and is
-- not relevant), so no measure walks down every position; those without a cutoff are computed
-- once per user, before the cutoffs are joined. With ties 'average', cg@k gives each
-- position of a tie group the group's mean gain, as the core's DCG does (McSherry and Najork
-- 2008); the metrics that count relevant items see tied items in trec_eval's order (item id
-- descending), since an average over orders has no single rank of the first relevant item.

-- ndcg_found(ranks, k): how many of `ranks` (the ranks of the relevant ranked items, in
-- ascending order) are <= k (a BIGINT; no cutoff: the largest BIGINT). Returns a BIGINT. All of
-- them when the last is <= k and none when the first is > k, read off the ends of the list (a
-- cutoff past a ranking's last relevant item, or above its first, is most cutoffs of most
-- users: no list is filtered for them).
CREATE OR REPLACE TEMP MACRO ndcg_found(ranks, k) AS
    CASE WHEN len(ranks) = 0 THEN 0
         WHEN ranks[-1] <= k THEN len(ranks)
         WHEN ranks[1] > k THEN 0
         ELSE coalesce(len(list_filter(ranks, lambda p: p <= k)), 0) END;

-- ndcg_over_r(count, num_rel): count / R, 0 when the user has no relevant judgment (R = 0).
CREATE OR REPLACE TEMP MACRO ndcg_over_r(count, num_rel) AS
    CASE WHEN num_rel > 0 THEN count / num_rel ELSE 0.0 END;

-- ndcg_precision(found, k): precision@k from found(k).
CREATE OR REPLACE TEMP MACRO ndcg_precision(found, k) AS found / k;

-- ndcg_hit_rate(found): 1.0 if a relevant item is among those counted, else 0.0 (a DOUBLE, as
-- every metric: the literals alone would make it a DECIMAL(2,1)).
CREATE OR REPLACE TEMP MACRO ndcg_hit_rate(found) AS
    CASE WHEN found > 0 THEN 1.0::DOUBLE ELSE 0.0::DOUBLE END;

-- ndcg_reciprocal_rank(ranks, found): 1 / the first relevant rank when it is counted, else 0.
CREATE OR REPLACE TEMP MACRO ndcg_reciprocal_rank(ranks, found) AS
    CASE WHEN found > 0 THEN 1.0 / ranks[1] ELSE 0.0 END;

-- ndcg_precisions(ranks): the precision at each relevant ranked item, j / p_j (a DOUBLE list).
CREATE OR REPLACE TEMP MACRO ndcg_precisions(ranks) AS list_transform(ranks, lambda p, j: j / p);

-- ndcg_average_precision(precisions, found, num_rel): map@k from ndcg_precisions and found(k):
-- the first found(k) precisions, summed in rank order, over R.
CREATE OR REPLACE TEMP MACRO ndcg_average_precision(precisions, found, num_rel) AS
    ndcg_over_r(coalesce(list_sum(precisions[1:found]), 0.0), num_rel);

-- ndcg_judged_dcg(judged_gains, discounts, judged): DCG down to a cutoff from the judged ranked
-- items' gains and discounts (1 / log2(i + 1) at each one's rank i) and judged (how many of
-- them are down to the cutoff, ndcg_found): the first `judged` gains times their discounts,
-- summed in rank order (the items not judged gain 0). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_judged_dcg(judged_gains, discounts, judged) AS
    -- (typed: DuckDB 1.5 binds a macro's body with NULL arguments when it is created)
    coalesce(list_dot_product(judged_gains[1:judged]::DOUBLE[], discounts[1:judged]::DOUBLE[]),
             0.0);

-- ndcg_cg(gains, depth): cg@k from a user's gains (ndcg_user_gains: the gain at each position)
-- and depth (k; no cutoff: the largest BIGINT): the gains of the first k positions, summed. A
-- DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_cg(gains, depth) AS coalesce(list_sum(gains[1:depth]), 0.0);

-- ndcg_bpref(relevant_ranks, nonrelevant_ranks, num_rel, num_nonrel): bpref from the positions
-- of the relevant and of the judged nonrelevant ranked items (ndcg_user_gains), R and N: for each
-- relevant item, 1 - min(n, R) / min(N, R) with n the nonrelevant ones above it (1 when n is 0),
-- summed in rank order, over R. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_bpref(relevant_ranks, nonrelevant_ranks, num_rel, num_nonrel) AS
    ndcg_over_r(coalesce(list_sum(list_transform(relevant_ranks,
        -- (not p: ndcg_found's own lambda names its variable p)
        lambda rel_at: CASE WHEN ndcg_found(nonrelevant_ranks, rel_at) > 0
                        THEN 1.0 - least(ndcg_found(nonrelevant_ranks, rel_at), num_rel)
                                   / least(num_nonrel, num_rel)
                        ELSE 1.0 END)), 0.0), num_rel);

-- ndcg_rbp_weights(judged_ranks, p): the weight of each judged rank i, p^(i - 1). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_rbp_weights(judged_ranks, p) AS
    list_transform(judged_ranks, lambda i: pow(p, i - 1)::DOUBLE);

-- ndcg_rbp_levels(judged_relevances): the relevance of each judged ranked item as trec_eval's rbp
-- reads it, 0 for a negative one (whatever is relevant). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_rbp_levels(judged_relevances) AS
    list_transform(judged_relevances, lambda level: greatest(level, 0)::DOUBLE);

-- ndcg_rbp(judged_ranks, levels, largest, p): rbp from the judged ranked items (ndcg_user_gains'
-- judged_ranks, and ndcg_rbp_levels of their relevances), the user's largest relevance and the
-- persistence p: the levels weighted by p^(i - 1) and summed in rank order (the items not judged
-- add 0), over the largest relevance when that is above 1, times 1 - p. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rbp(judged_ranks, levels, largest, p) AS
    (1 - p) * coalesce(list_dot_product(levels, ndcg_rbp_weights(judged_ranks, p)), 0.0)
    / greatest(largest, 1.0);

-- trec_eval's set measures (see the header): each reads F (num_rel_ret: the relevant ranked
-- items), n (num_ret: the ranking's length) and R (num_rel), BIGINTs; each returns a DOUBLE.

-- ndcg_set_precision(num_rel_ret, num_ret): F / n, 0 for an empty ranking (trec_eval set_P).
CREATE OR REPLACE TEMP MACRO ndcg_set_precision(num_rel_ret, num_ret) AS
    CASE WHEN num_ret > 0 THEN num_rel_ret::DOUBLE / num_ret ELSE 0.0 END;

-- ndcg_set_relative_precision(num_rel_ret, num_ret, num_rel): F / min(n, R), the share of the
-- most relevant items a ranking of length n could hold; 0 when n or R is 0 (set_relative_P).
CREATE OR REPLACE TEMP MACRO ndcg_set_relative_precision(num_rel_ret, num_ret, num_rel) AS
    CASE WHEN num_ret > 0 AND num_rel > 0
         THEN num_rel_ret::DOUBLE / least(num_ret, num_rel) ELSE 0.0 END;

-- ndcg_set_map(num_rel_ret, num_ret, num_rel): F^2 / (n R), set precision times set recall; 0
-- when n or R is 0 (trec_eval set_map).
CREATE OR REPLACE TEMP MACRO ndcg_set_map(num_rel_ret, num_ret, num_rel) AS
    CASE WHEN num_ret > 0 AND num_rel > 0
         THEN (num_rel_ret::DOUBLE * num_rel_ret) / (num_ret::DOUBLE * num_rel) ELSE 0.0 END;

-- ndcg_set_f(num_rel_ret, num_ret, num_rel, beta): (b + 1) P Rc / (b P + Rc) with P = F / n,
-- Rc = F / R and b = beta (>= 0: how much more recall weighs than precision); 0 when no relevant
-- item is ranked (trec_eval set_F).
CREATE OR REPLACE TEMP MACRO ndcg_set_f(num_rel_ret, num_ret, num_rel, beta) AS
    CASE WHEN num_rel_ret > 0
         THEN (beta + 1.0) * ndcg_set_precision(num_rel_ret, num_ret)
              * ndcg_over_r(num_rel_ret, num_rel)
              / (beta * ndcg_set_precision(num_rel_ret, num_ret) + ndcg_over_r(num_rel_ret, num_rel))
         ELSE 0.0 END;

-- ndcg_iprec(precisions, num_rel, level): the interpolated precision at recall `level` (a
-- DOUBLE in [0, 1]) from ndcg_precisions (j / p_j for each relevant ranked item) and R: the
-- largest of the precisions from the c-th on, c = round(level R) (at least the first), 0 when c
-- is more than the relevant items ranked (trec_eval iprec_at_recall). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_iprec(precisions, num_rel, level) AS
    CASE WHEN round(level * num_rel) <= len(precisions)
         THEN coalesce(list_max(precisions[greatest(round(level * num_rel)::BIGINT, 1):]), 0.0)
         ELSE 0.0 END;

-- ndcg_iprec_11pt_avg(precisions, num_rel): the mean of ndcg_iprec at recall 0, 0.1, ..., 1
-- (trec_eval 11pt_avg). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_iprec_11pt_avg(precisions, num_rel) AS
    list_sum(list_transform(range(0, 11), lambda tenths: ndcg_iprec(precisions, num_rel,
                                                                    tenths / 10.0))) / 11.0;

-- ndcg_log_floored(x): ln(max(x, 0.00001)), a user's share of a geometric mean over users
-- (gm_map, gm_bpref): the summary is exp of the mean of these (trec_eval's MIN_GEO_MEAN floor,
-- so that a user at 0 does not make the mean 0). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_log_floored(x) AS ln(greatest(x, 0.00001::DOUBLE));

-- ndcg_iprec_levels(): trec_eval's recall levels of iprec_at_recall (0, 0.1, ..., 1), the
-- ones ndcg_metric_values gives. A DOUBLE[].
CREATE OR REPLACE TEMP MACRO ndcg_iprec_levels() AS
    [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]::DOUBLE[];

-- ndcg_rprec_multiples(): trec_eval's multiples of R of Rprec_mult (0.2, 0.4, ..., 2), the
-- ones ndcg_metric_values gives. A DOUBLE[].
CREATE OR REPLACE TEMP MACRO ndcg_rprec_multiples() AS
    [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]::DOUBLE[];

-- ndcg_iprec_from(num_relevant, level): the first relevant item ndcg_iprec reads at recall
-- `level`: round(level R), at least 1. A BIGINT.
CREATE OR REPLACE TEMP MACRO ndcg_iprec_from(num_relevant, level) AS
    greatest(round(level::DOUBLE * num_relevant)::BIGINT, 1);

-- ndcg_iprec_at_recall(relevant_ranks, num_relevant, level): the interpolated precision at
-- recall `level` (0 <= level <= 1) from the ranks of the relevant ranked items and R (trec_eval
-- iprec_at_recall.level, ir_measures IPrec@level): ndcg_iprec, with the precisions j / p_j made
-- from the ranks it reads (from the cut on), not the whole list per level. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_iprec_at_recall(relevant_ranks, num_relevant, level) AS
    CASE WHEN round(level::DOUBLE * num_relevant) <= len(relevant_ranks)
         THEN coalesce(list_max(list_transform(
                  relevant_ranks[ndcg_iprec_from(num_relevant, level):],
                  lambda p, i: (i + ndcg_iprec_from(num_relevant, level) - 1) / p)), 0.0)
         ELSE 0.0 END;

-- ndcg_rprec_cut(num_relevant, multiple): the rank Rprec_mult reads, floor(multiple R + 0.9)
-- in DOUBLE arithmetic as trec_eval's (long) (multiple * R + 0.9). A BIGINT.
CREATE OR REPLACE TEMP MACRO ndcg_rprec_cut(num_relevant, multiple) AS
    floor(multiple::DOUBLE * num_relevant + 0.9::DOUBLE)::BIGINT;

-- ndcg_rprec_mult(relevant_ranks, num_relevant, multiple): the precision at ndcg_rprec_cut, 0
-- when that is 0 (trec_eval Rprec_mult.multiple). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rprec_mult(relevant_ranks, num_relevant, multiple) AS
    CASE WHEN ndcg_rprec_cut(num_relevant, multiple) > 0
         THEN ndcg_found(relevant_ranks, ndcg_rprec_cut(num_relevant, multiple))
              / ndcg_rprec_cut(num_relevant, multiple)
         ELSE 0.0::DOUBLE END;

-- ndcg_relative_precision(found, k, num_rel): relative_precision@k from found(k): found(k) /
-- min(k, R), 0 when R is 0; NULL without a cutoff (trec_eval relative_P_k).
CREATE OR REPLACE TEMP MACRO ndcg_relative_precision(found, k, num_rel) AS
    CASE WHEN k IS NULL THEN NULL WHEN num_rel > 0 THEN found / least(k, num_rel) ELSE 0.0 END;

-- ndcg_judged_share(judged_ranks, depth, length): judged@k from the positions of the judged
-- ranked items (ndcg_user_gains' judged_ranks), depth (k; no cutoff: the largest BIGINT) and the
-- ranking's length: the share of the first min(k, length) that is judged; 0 for no ranking.
CREATE OR REPLACE TEMP MACRO ndcg_judged_share(judged_ranks, depth, length) AS
    CASE WHEN least(depth, length) > 0 THEN ndcg_found(judged_ranks, depth) / least(depth, length)
         ELSE 0.0 END;

-- ndcg_ideal_cg(ideal, depth, length, idcg_cutoff): icg@k, the ideal gains' (best first) cg@k;
-- with idcg_cutoff 'list', of the first `length` of them only (as ndcg_ideal_dcg). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_cg(ideal, depth, length, idcg_cutoff) AS
    ndcg_cg(CASE WHEN idcg_cutoff = 'list' THEN ideal[1:length] ELSE ideal END, depth);

-- ndcg_err_max_grade(): the largest grade ERR reads, gdeval's MAX_JUDGMENT.
CREATE OR REPLACE TEMP MACRO ndcg_err_max_grade() AS 4;

-- ndcg_err_stop(grade): gdeval's chance that a user stops at an item of this grade,
-- (2^grade - 1) / 2^4: 0 for grade 0, 15/16 for grade 4.
CREATE OR REPLACE TEMP MACRO ndcg_err_stop(grade) AS
    (pow(2, grade) - 1) / pow(2, ndcg_err_max_grade());

-- ndcg_err_grades(judged_relevances, judged_relevant): the grade of each judged ranked item: its
-- relevance when it is relevant, 0 otherwise, as gdeval reads its qrels (it keeps the
-- judgments > 0). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_err_grades(judged_relevances, judged_relevant) AS
    list_transform(list_zip(judged_relevances, judged_relevant),
                   lambda judgment: CASE WHEN judgment[2] THEN judgment[1]::DOUBLE ELSE 0.0 END);

-- ndcg_err_steps(judged_ranks, grades): what each judged rank i adds to ERR: err, r_i / i (the
-- value of stopping there, for a user still looking), and looking, 1 - r_i (the share that looks
-- on); the ranks not judged (grade 0) add nothing and leave everyone looking. A list of
-- STRUCT(err DOUBLE, looking DOUBLE), one per judged rank.
CREATE OR REPLACE TEMP MACRO ndcg_err_steps(judged_ranks, grades) AS
    list_transform(grades, lambda g, t: {'err': ndcg_err_stop(g)::DOUBLE / judged_ranks[t],
                                         'looking': 1 - ndcg_err_stop(g)::DOUBLE});

-- ndcg_err(steps, judged): err@k from ndcg_err_steps and judged (how many judged ranks are in the
-- first k, ndcg_found): one pass down them, carrying the sum so far and the chance that the user
-- is still looking (the product of 1 - r_j above). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_err(steps, judged) AS
    list_reduce(steps[1:judged],
                lambda acc, step: {'err': acc.err + acc.looking * step.err,
                                   'looking': acc.looking * step.looking},
                {'err': 0.0::DOUBLE, 'looking': 1.0::DOUBLE}).err;

-- ndcg_err_graded(user_id, judged, relevances): true when none of the user's relevances (judged:
-- the items, relevances: theirs, in that order) is above ERR's largest grade; otherwise stops
-- naming the user, the item and its relevance (gdeval refuses such a qrels file: a stop chance
-- past 1 would make a wrong ERR). Users without a judgment pass.
CREATE OR REPLACE TEMP MACRO ndcg_err_graded(user_id, judged, relevances) AS
    ndcg_require(coalesce(list_max(relevances) <= ndcg_err_max_grade(), true),
        'relevance: user ' || ndcg_show(user_id) || ', item '
        || ndcg_show(judged[list_position(relevances, list_max(relevances))]) || ': relevance '
        || ndcg_show(list_max(relevances)) || ' is above ' || ndcg_err_max_grade()
        || ', the largest grade err reads (gdeval''s ERR stops at a grade with chance '
        || '(2^grade - 1) / 2^' || ndcg_err_max_grade()
        || '): rescale the relevance to grades 0 to ' || ndcg_err_max_grade() || ' for err');

-- trec_eval's other per-query measures (see the header), each over the whole ranking but unj.

-- ndcg_infap_epsilon(): the small number trec_eval's infAP adds so that no ratio divides by 0
-- (its INFAP_EPSILON).
CREATE OR REPLACE TEMP MACRO ndcg_infap_epsilon() AS 0.00001;

-- ndcg_infap(relevant_ranks, nonrelevant_ranks, judged_ranks, num_rel): infAP from the positions
-- of the relevant, the judged nonrelevant and all the judged ranked items (ndcg_user_gains) and
-- R: at the j-th relevant item, at rank p, the precision expected from the judged items above it
-- (J - 1 of them, m judged nonrelevant), 1 / p + ((p - 1) / p) (J - 1) / (p - 1) (j - 1 + e) /
-- (j - 1 + m + 2e), summed in rank order, over R. J, the judged items down to p, is p's place
-- among the judged ranks (ascending, and p is one of them): list_position, not a count per
-- relevant item. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_infap(relevant_ranks, nonrelevant_ranks, judged_ranks,
        num_rel) AS
    ndcg_over_r(coalesce(list_sum(list_transform(relevant_ranks,
        lambda rel_at, j: (1.0 + (list_position(judged_ranks, rel_at) - 1)
                                 * (j - 1 + ndcg_infap_epsilon())
                                 / (j - 1 + ndcg_found(nonrelevant_ranks, rel_at - 1)
                                    + 2 * ndcg_infap_epsilon())) / rel_at)), 0.0), num_rel);

-- ndcg_judged_discounted(judged_ranks, judged_gains): what each judged ranked item adds to DCG,
-- g / log2(i + 1) at its rank i (ndcg_dcg; the items not judged add 0). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_judged_discounted(judged_ranks, judged_gains) AS
    list_transform(judged_gains, lambda g, t: ndcg_dcg(g, judged_ranks[t])::DOUBLE);

-- ndcg_dcg_to(discounted, judged): the ranking's DCG down to a rank, from ndcg_judged_discounted
-- and judged (how many judged ranks are down to it, ndcg_found): those terms summed in rank
-- order. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_dcg_to(discounted, judged) AS
    coalesce(list_sum(discounted[1:judged]), 0.0);

-- ndcg_ideal_discounted(ideal): what each of the ideal's gains adds to the ideal DCG, g / log2(i +
-- 1) at its position i (ndcg_dcg). A DOUBLE list.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_discounted(ideal) AS
    list_transform(ideal, lambda g, i: ndcg_dcg(g, i)::DOUBLE);

-- ndcg_ideal_dcg_to(ideal_discounted, n): the ideal DCG at n (the whole ideal's when it is
-- shorter), from ndcg_ideal_discounted: its first n terms summed. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_ideal_dcg_to(ideal_discounted, n) AS
    coalesce(list_sum(ideal_discounted[1:n]), 0.0);

-- ndcg_level_changes(ideal): the positions b of an ideal list (positive gains, best first) after
-- which its gain changes: ideal[b] != ideal[b + 1], the last position always. A BIGINT list.
CREATE OR REPLACE TEMP MACRO ndcg_level_changes(ideal) AS
    list_filter(range(1, len(ideal) + 1),
                lambda b: ideal[b] != coalesce(ideal[b + 1], 0.0));

-- ndcg_rndcg(judged_ranks, discounted, length, ideal, ideal_discounted, num_rel): Rndcg from the
-- judged ranked items (their ranks and ndcg_judged_discounted), the ranking's length, every
-- positive gain best first (ndcg_user_gains' every_ideal, and its ndcg_ideal_discounted) and R: the mean of the nDCG at each level change b
-- of the ideal (the ranking's DCG at b, or at its end when shorter, over the ideal DCG at b),
-- and of the whole ranking's DCG over the whole ideal DCG when the ranking runs 2 or more past
-- the ideal (trec_eval's last "implied R-level"); 0 when R or the ideal is empty. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rndcg(judged_ranks, discounted, length, ideal,
        ideal_discounted, num_rel) AS
    CASE WHEN num_rel > 0 AND len(ideal) > 0
         THEN list_avg(list_transform(ndcg_level_changes(ideal),
                                      lambda b: ndcg_dcg_to(discounted, ndcg_found(judged_ranks, b))
                                                / ndcg_ideal_dcg_to(ideal_discounted, b))
                       || CASE WHEN length >= len(ideal) + 2
                               THEN [ndcg_dcg_to(discounted, len(discounted))
                                     / ndcg_dcg_all(ideal)]
                               ELSE []::DOUBLE[] END)
         ELSE 0.0 END;

-- ndcg_rel_total(judged_ranks, judged_gains, discounted, ideal_discounted): ndcg_rel's sum: the
-- nDCG at each ranked item with a gain > 0 (the DCG down to its rank i over the ideal DCG at i),
-- in rank order, and the whole ranking's nDCG once for each positive gain of the ideal not met.
-- A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rel_total(judged_ranks, judged_gains, discounted,
        ideal_discounted) AS
    coalesce(list_sum(list_transform(judged_ranks,
        lambda i, t: CASE WHEN judged_gains[t] > 0
                          THEN ndcg_dcg_to(discounted, t)
                               / ndcg_ideal_dcg_to(ideal_discounted, i)
                          ELSE 0.0 END)), 0.0)
    + (len(ideal_discounted) - len(list_filter(judged_gains, lambda g: g > 0)))
      * ndcg_dcg_to(discounted, len(discounted))
      / ndcg_ideal_dcg_to(ideal_discounted, len(ideal_discounted));

-- ndcg_ndcg_rel(judged_ranks, judged_gains, discounted, ideal_discounted): ndcg_rel from the
-- judged ranked items (their ranks, gains and ndcg_judged_discounted) and the terms of every
-- positive gain best first (ndcg_ideal_discounted of every_ideal): ndcg_rel_total over the
-- ideal's length, 0 when that sum is not positive (or the ideal is empty). A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_ndcg_rel(judged_ranks, judged_gains, discounted,
        ideal_discounted) AS
    CASE WHEN len(ideal_discounted) > 0
         THEN greatest(ndcg_rel_total(judged_ranks, judged_gains, discounted, ideal_discounted),
                       0.0)
              / len(ideal_discounted)
         ELSE 0.0 END;

-- ndcg_rbp_resid(counted_ranks, length, p): rbp_resid from the positions of the ranked items
-- trec_eval counts as judged (ndcg_user_gains' judged_ranks but those judged below 0), the
-- ranking's length and the persistence p: p^n plus (1 - p) p^(i - 1) for each unjudged rank i,
-- which is 1 less (1 - p) p^(i - 1) for each judged rank i (the weights of ranks 1 .. n add up to
-- 1 - p^n), added in rank order; 0 when every ranked item is judged. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_rbp_resid(counted_ranks, length, p) AS
    CASE WHEN len(counted_ranks) < length
         THEN 1 - (1 - p) * coalesce(list_sum(ndcg_rbp_weights(counted_ranks, p)), 0.0)
         ELSE 0.0 END;

-- ndcg_num_docs(num_docs): trec_eval's -N as a BIGINT; stops when it is not a whole number >= 0.
CREATE OR REPLACE TEMP MACRO ndcg_num_docs(num_docs) AS
    CASE WHEN ndcg_require(coalesce(TRY_CAST(num_docs::VARCHAR AS BIGINT) >= 0, false),
                           'num_docs must be a whole number >= 0, not ' || ndcg_show(num_docs))
         THEN TRY_CAST(num_docs::VARCHAR AS BIGINT) END;

-- ndcg_utility(num_rel_ret, num_ret, num_rel, weights, num_docs): trec_eval's utility from F, n,
-- R, the four weights (a DOUBLE list: relevant ranked, nonrelevant ranked, relevant not ranked,
-- nonrelevant not ranked) and the documents in the collection. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_utility(num_rel_ret, num_ret, num_rel, weights, num_docs) AS
    (weights[1] * num_rel_ret + weights[2] * (num_ret - num_rel_ret)
     + weights[3] * (num_rel - num_rel_ret)
     + weights[4] * (num_docs + num_rel_ret - num_ret - num_rel))::DOUBLE;

-- ndcg_utility_weights_ok(weights): true when weights is a list of 4 finite numbers; otherwise
-- stops naming utility_weights and its value.
CREATE OR REPLACE TEMP MACRO ndcg_utility_weights_ok(weights) AS
    ndcg_require(coalesce(len(weights) = 4
                          AND list_count(list_filter(weights, lambda w: isfinite(w))) = 4, false),
                 'utility_weights must be a list of 4 finite numbers (relevant ranked, '
                 || 'nonrelevant ranked, relevant not ranked, nonrelevant not ranked), not '
                 || ndcg_show(weights));

-- ndcg_negative_ranks(judged_ranks, judged_relevances): the positions of the ranked items judged
-- below 0, which trec_eval counts as unjudged (from ndcg_user_gains' judged ranked items). A
-- BIGINT list.
CREATE OR REPLACE TEMP MACRO ndcg_negative_ranks(judged_ranks, judged_relevances) AS
    ndcg_ranks_where(judged_ranks, list_transform(judged_relevances, lambda r: r < 0));

-- ndcg_counted_ranks(judged_ranks, judged_relevances): the positions of the ranked items
-- trec_eval counts as judged: a judgment >= 0. A BIGINT list.
CREATE OR REPLACE TEMP MACRO ndcg_counted_ranks(judged_ranks, judged_relevances) AS
    ndcg_ranks_where(judged_ranks, list_transform(judged_relevances, lambda r: r >= 0));

-- ndcg_unj(judged_ranks, negative_ranks, length, k): unj@k from the positions of the judged
-- ranked items and of those judged below 0 (ndcg_negative_ranks) and the ranking's length: the
-- first min(k, length) ranks less the judged ones plus the negatively judged ones, the unjudged
-- items in the first k, over k (counted from the few judged positions rather than the many
-- unjudged ones: 9x fewer positions read per cutoff); NULL without a cutoff. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_unj(judged_ranks, negative_ranks, length, k) AS
    CASE WHEN k IS NOT NULL
         THEN (least(k, length) - ndcg_found(judged_ranks, k) + ndcg_found(negative_ranks, k)) / k
    END;

-- ndcg_g_costs(ideal): what each rank j costs in G, max(I_j, 1), I_j the ideal's j-th gain (past
-- the ideal, each rank costs 1). A DOUBLE list as long as the ideal.
CREATE OR REPLACE TEMP MACRO ndcg_g_costs(ideal) AS
    list_transform(ideal, lambda gain: greatest(gain, 1.0)::DOUBLE);

-- ndcg_g_cost(costs, i): G's cost of the first i ranks, C_i = sum_{j <= i} max(I_j, 1), from
-- ndcg_g_costs. A DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_g_cost(costs, i) AS
    coalesce(list_sum(costs[1:i]), 0.0) + greatest(i - len(costs), 0);

-- ndcg_g(judged_ranks, judged_gains, ideal, costs): G from the judged ranked items (their ranks
-- and gains, the items not judged adding nothing), every positive gain best first (every_ideal)
-- and their ndcg_g_costs: each gain g_i over log2(2 + C_i - S_i) at its rank i (C_i:
-- ndcg_g_cost; S_i: the gains down to i), summed in rank order, over the ideal's total gain; 0
-- when the ideal is empty. A DOUBLE. Give costs as a column (ndcg_user_metrics' g_costs), not
-- as the call ndcg_g_costs(ideal): a macro's argument is pasted into the lambda, and DuckDB
-- evaluates what a lambda reads once per list element (here once per judged ranked item: 2.2x
-- the time at 300k users).
CREATE OR REPLACE TEMP MACRO ndcg_g(judged_ranks, judged_gains, ideal, costs) AS
    CASE WHEN len(ideal) > 0
         THEN coalesce(list_sum(list_transform(judged_ranks,
                  lambda i, t: CASE WHEN judged_gains[t] != 0
                                    THEN judged_gains[t]
                                         / log2(2 + ndcg_g_cost(costs, i)
                                                - list_sum(judged_gains[1:t]))
                                    ELSE 0.0 END)), 0.0)
              / list_sum(ideal)
         ELSE 0.0 END;

-- ndcg_bin_g(relevant_ranks, num_rel): binG from the positions of the relevant ranked items and
-- R: for the j-th of them, at rank p, 1 / log2(2 + p - j), summed in rank order, over R. A
-- DOUBLE.
CREATE OR REPLACE TEMP MACRO ndcg_bin_g(relevant_ranks, num_rel) AS
    ndcg_over_r(coalesce(list_sum(list_transform(relevant_ranks,
        lambda rel_at, j: 1.0 / log2(2 + rel_at - j))), 0.0), num_rel);

-- ndcg_metric_name(metric, k): the name a metric goes by at cutoff k (NULL: none), as the CLI and
-- Python write it: 'precision@10', 'ndcg@all', 'mrr' (mrr and map without a cutoff), and
-- 'r_precision', 'num_rel', 'num_rel_ret', 'bpref', 'rbp' and trec_eval's num_ret,
-- num_nonrel_judged_ret, set measures, infap, rndcg, ndcg_rel, rbp_resid, utility, g and bing
-- (which have none).
CREATE OR REPLACE TEMP MACRO ndcg_metric_name(metric, k) AS
    CASE WHEN metric IN ('r_precision', 'num_rel', 'num_rel_ret', 'bpref', 'rbp', 'num_ret',
                         'num_nonrel_judged_ret', 'set_precision', 'set_relative_precision',
                         'set_map', 'set_f', 'iprec_11pt_avg', 'gm_map', 'gm_bpref')
              OR metric IN ('infap', 'rndcg', 'ndcg_rel', 'rbp_resid', 'utility', 'g', 'bing')
              OR (k IS NULL AND metric IN ('mrr', 'map')) THEN metric
         ELSE metric || '@' || coalesce(k::VARCHAR, 'all') END;

-- ndcg_user_metrics(rankings, judgments, ks, idcg_cutoff, judged_only, ties, rbp_p, set_f_beta,
-- utility_weights, num_docs, edge_gains): every user of either side, with every metric at each
-- cutoff, from the judged ranked items (ndcg_user_gains): ndcg_user_scores' columns
-- (user_id, k (NULL: no cutoff), dcg, idcg, ndcg, has_judgments, has_ranking) and cg, precision
-- and relative_precision (NULL without a cutoff), recall, hit_rate, mrr, map, judged, ncg, err,
-- and on the row of the first cutoff in ks only (NULL on the others) r_precision, num_rel,
-- num_rel_ret, bpref, rbp (with the persistence rbp_p, 0 < rbp_p < 1), num_ret,
-- num_nonrel_judged_ret, set_precision, set_relative_precision, set_map, set_f (with
-- set_f_beta >= 0), iprec_11pt_avg, gm_map and gm_bpref (ln(max(value, 0.00001)):
-- ndcg_log_floored), infap, rndcg, ndcg_rel, rbp_resid, utility (with utility_weights, 4
-- numbers, and num_docs >= 0), g and bing, which have no cutoff, and unj (NULL without a
-- cutoff), each computed once per user before the cutoffs are joined. One row per user and
-- cutoff. ties 'average' averages the DCG family over each tie group; the other metrics see
-- tied items in trec_eval's order. Stops on a DCG, ideal DCG, CG or ideal CG that adds up past
-- the largest DOUBLE (ndcg_sum_finite), and, where err is read, on a relevance above its largest
-- grade (ndcg_err_graded). Then relevant_ranks and num_relevant (ndcg_user_gains'), which
-- trec_eval's families iprec_at_recall and Rprec_mult read as columns (read out of edge inside
-- their lambdas, a field costs a lookup per list element). Last, edge: what the user's own
-- measures read (sql/ndcg_custom.sql),
-- a STRUCT of the user's gains, relevant_ranks, judged_ranks, num_relevant, ideal and length
-- (ndcg_user_gains) and the cutoff's k and depth; with edge_gains false its gains are NULL (the
-- gain at each position, which no built-in measure reads but those of ties 'average', costs a
-- walk down every position: give false when no own measure reads gains).
CREATE OR REPLACE TEMP MACRO ndcg_user_metrics(rankings, judgments, ks := [10],
        idcg_cutoff := 'k', judged_only := false, ties := 'trec', rbp_p := 0.9,
        set_f_beta := 1.0, utility_weights := [1.0, -1.0, 0.0, 0.0], num_docs := 0,
        edge_gains := true) AS TABLE
    SELECT user_id, k, dcg, idcg, ndcg_ratio(dcg, idcg) AS ndcg, has_judgments, has_ranking, cg,
           CASE WHEN k IS NOT NULL THEN ndcg_precision(found, k) END AS precision,
           ndcg_over_r(found, num_rel) AS recall, ndcg_hit_rate(found) AS hit_rate,
           ndcg_reciprocal_rank(ranks, found) AS mrr,
           map_down AS map,
           CASE WHEN first THEN r_precision END AS r_precision,
           CASE WHEN first THEN num_rel END AS num_rel,
           CASE WHEN first THEN num_rel_ret END AS num_rel_ret,
           CASE WHEN first THEN bpref END AS bpref, CASE WHEN first THEN rbp END AS rbp,
           CASE WHEN first THEN length END AS num_ret,
           CASE WHEN first THEN num_nonrel_judged_ret END AS num_nonrel_judged_ret,
           CASE WHEN first THEN set_precision END AS set_precision,
           CASE WHEN first THEN set_relative_precision END AS set_relative_precision,
           CASE WHEN first THEN set_map END AS set_map, CASE WHEN first THEN set_f END AS set_f,
           CASE WHEN first THEN iprec_11pt_avg END AS iprec_11pt_avg,
           CASE WHEN first THEN infap END AS infap, CASE WHEN first THEN rndcg END AS rndcg,
           CASE WHEN first THEN ndcg_rel END AS ndcg_rel,
           CASE WHEN first THEN rbp_resid END AS rbp_resid,
           CASE WHEN first THEN utility END AS utility,
           ndcg_unj(judged_ranks, negative_ranks, length, k) AS unj,
           CASE WHEN first THEN g END AS g, CASE WHEN first THEN bing END AS bing,
           CASE WHEN first THEN ndcg_log_floored(whole_map) END AS gm_map,
           CASE WHEN first THEN ndcg_log_floored(bpref) END AS gm_bpref,
           ndcg_relative_precision(found, k, num_rel) AS relative_precision,
           ndcg_judged_share(judged_ranks, depth, length) AS judged, ndcg_ratio(cg, icg) AS ncg,
           CASE WHEN ndcg_err_graded(user_id, judged_items, relevances)
                THEN ndcg_err(err_steps, judged_down) END AS err,
           ranks AS relevant_ranks, num_rel AS num_relevant,
           {'gains': CASE WHEN edge_gains THEN position_gains END, 'relevant_ranks': ranks,
            'judged_ranks': judged_ranks, 'num_relevant': num_rel, 'ideal': edge_ideal,
            'length': length, 'k': k, 'depth': depth} AS edge
    -- each cutoff's sums: DCG and CG down to k from the judged ranked items (the others gain
    -- 0), but with ties 'average', whose gains are spread over each tie's positions; a cutoff
    -- at or past the last judged item (the ideal's last gain, the last relevant item) takes the
    -- user's whole sum, summed once (the same terms in the same order: the same number)
    FROM (SELECT *,
                 CASE WHEN ties = 'average'
                      THEN ndcg_dcg_at(position_gains, cutoff_discounts, depth, ndcg_width(ks))
                      WHEN judged_down = len(judged_ranks) THEN whole_dcg
                      ELSE ndcg_judged_dcg(judged_gains, discounts, judged_down) END AS dcg,
                 CASE WHEN ndcg_width(ks) IS NULL AND depth >= len(edge_ideal) THEN whole_idcg
                      ELSE ndcg_ideal_dcg(edge_ideal, cutoff_discounts, depth, ndcg_width(ks),
                                          length, idcg_cutoff) END AS idcg,
                 CASE WHEN ties = 'average' THEN ndcg_cg(position_gains, depth)
                      WHEN judged_down = len(judged_ranks) THEN whole_cg
                      ELSE ndcg_cg(judged_gains, judged_down) END AS cg,
                 CASE WHEN found = len(ranks) THEN whole_map
                      ELSE ndcg_average_precision(precisions, found, num_rel) END AS map_down,
                 CASE WHEN depth >= len(edge_ideal) THEN whole_icg
                      ELSE ndcg_ideal_cg(edge_ideal, depth, length, idcg_cutoff) END AS icg
    FROM (SELECT u.*, c.k, c.depth, c.discounts AS cutoff_discounts,
                 c.k IS NOT DISTINCT FROM ks[1] AS first,
                 ndcg_found(u.judged_ranks, c.depth) AS judged_down,
                 ndcg_found(u.ranks, c.depth) AS found,
                 u.edge_ideal[1] AS largest_gain
          -- the whole ranking's sums, once per user (the cutoffs at or past its end take them)
          FROM (SELECT *, ndcg_judged_dcg(judged_gains, discounts, len(judged_ranks)) AS whole_dcg,
                       ndcg_cg(judged_gains, len(judged_ranks)) AS whole_cg,
                       ndcg_ideal_dcg(edge_ideal, NULL::DOUBLE[], 9223372036854775807,
                                      NULL::BIGINT, length, idcg_cutoff) AS whole_idcg,
                       ndcg_ideal_cg(edge_ideal, 9223372036854775807, length, idcg_cutoff)
                           AS whole_icg,
                       ndcg_average_precision(precisions, len(ranks), num_rel) AS whole_map
          -- the measures without a cutoff, once per user
          FROM (SELECT *, ndcg_over_r(found_r, num_rel) AS r_precision,
                       len(ranks) AS num_rel_ret,
                       ndcg_bpref(ranks, nonrelevant_ranks, num_rel, num_nonrel) AS bpref,
                       ndcg_rbp(judged_ranks, ndcg_rbp_levels(judged_relevances), largest_level,
                                rbp_p) AS rbp,
                       len(nonrelevant_ranks) AS num_nonrel_judged_ret,
                       ndcg_set_precision(len(ranks), length) AS set_precision,
                       ndcg_set_relative_precision(len(ranks), length, num_rel)
                           AS set_relative_precision,
                       ndcg_set_map(len(ranks), length, num_rel) AS set_map,
                       ndcg_set_f(len(ranks), length, num_rel, set_f_beta) AS set_f,
                       ndcg_iprec_11pt_avg(precisions, num_rel) AS iprec_11pt_avg,
                       ndcg_infap(ranks, nonrelevant_ranks, judged_ranks, num_rel) AS infap,
                       ndcg_rndcg(judged_ranks, discounted, length, every_ideal,
                                  ideal_discounted, num_rel) AS rndcg,
                       ndcg_ndcg_rel(judged_ranks, judged_gains, discounted, ideal_discounted)
                           AS ndcg_rel,
                       ndcg_rbp_resid(ndcg_counted_ranks(judged_ranks, judged_relevances),
                                      length, rbp_p) AS rbp_resid,
                       CASE WHEN has_ranking
                            THEN ndcg_utility(len(ranks), length, num_rel, utility_weights,
                                              ndcg_num_docs(num_docs))
                            ELSE 0.0 END AS utility,
                       ndcg_g(judged_ranks, judged_gains, every_ideal, g_costs) AS g,
                       ndcg_bin_g(ranks, num_rel) AS bing
                FROM (SELECT user_id, has_judgments, has_ranking, length, judged_ranks,
                             judged_gains, judged_relevances, nonrelevant_ranks, every_ideal,
                             relevant_ranks AS ranks, ndcg_precisions(relevant_ranks) AS precisions,
                             ndcg_found(relevant_ranks, num_relevant) AS found_r,
                             ndcg_negative_ranks(judged_ranks, judged_relevances) AS negative_ranks,
                             -- (Rndcg and ndcg_rel read their few D_t and ID_i as slices of
                             -- these: running sums as lists cost more than they save, and read
                             -- by index on every cutoff's row too: reports/2026-11-26-trec31i.md
                             -- and 2026-11-26-trec31j.md)
                             discounted, ideal_discounted,
                             ndcg_g_costs(every_ideal) AS g_costs,
                             list_transform(judged_ranks, lambda i: ndcg_dcg(1.0, i)) AS discounts,
                             ndcg_err_steps(judged_ranks,
                                            ndcg_err_grades(judged_relevances, judged_relevant))
                                 AS err_steps,
                             gains AS position_gains, ideal AS edge_ideal, ideal_depth,
                             judged AS judged_items, relevances,
                             num_nonrelevant AS num_nonrel, num_relevant AS num_rel,
                             greatest(coalesce(list_max(relevances), 0), 0) AS largest_level
                      -- (the terms of D and ID one level down: the lambdas that slice
                      -- them read columns, not expressions they would compute per element)
                      FROM (SELECT *, ndcg_judged_discounted(judged_ranks, judged_gains)
                                          AS discounted,
                                   ndcg_ideal_discounted(every_ideal) AS ideal_discounted
                            FROM ndcg_user_gains(rankings, judgments, width := ndcg_width(ks),
                                                 judged_only := judged_only, ties := ties,
                                                 position_gains := edge_gains
                                                                   OR ties = 'average'))))) AS u
          CROSS JOIN ndcg_cutoffs(ks) AS c
          WHERE ndcg_option('idcg_cutoff', idcg_cutoff, ['k', 'list'])
            AND ndcg_ideal_covers(u.ideal_depth, ks)
            AND ndcg_require(rbp_p > 0 AND rbp_p < 1, 'rbp_p must be a number between 0 and 1 '
                             || '(both left out), not ' || ndcg_show(rbp_p))
            AND ndcg_require(set_f_beta >= 0, 'set_f_beta must be a number >= 0, not '
                             || ndcg_show(set_f_beta))
            AND ndcg_utility_weights_ok(utility_weights)))
    WHERE ndcg_sum_finite(user_id, k, 'ideal DCG', idcg, largest_gain)
      AND ndcg_sum_finite(user_id, k, 'DCG', dcg, largest_gain)
      AND ndcg_sum_finite(user_id, k, 'CG', cg, largest_gain)
      AND ndcg_sum_finite(user_id, k, 'ideal CG', icg, largest_gain);

-- ndcg_metrics_evaluated(user_metrics, missing, empty): the rows of a ndcg_user_metrics result
-- that count, as ndcg_evaluated chooses them (missing and empty apply to every metric: empty
-- 'skip' leaves out the users whose ideal DCG is 0). Returns its columns but has_judgments and
-- has_ranking.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_evaluated(user_metrics, missing := 'zero',
        empty := 'zero') AS TABLE
    SELECT * EXCLUDE (has_judgments, has_ranking)
    FROM query_table(user_metrics)
    WHERE has_judgments
      AND (missing = 'zero' OR has_ranking)
      AND (empty = 'zero' OR idcg > 0)
      AND (SELECT ndcg_option('missing', missing, ['zero', 'skip'])
                  AND ndcg_option('empty', empty, ['zero', 'skip']));

-- ndcg_metrics_summary(metrics): a ndcg_metrics_evaluated result summed up per cutoff: k, the
-- mean over users of each metric (fsum / count of its values), the sums of num_rel,
-- num_rel_ret, num_ret and num_nonrel_judged_ret (as trec_eval and ir_measures add up counts;
-- NULL but on the first cutoff's row),
-- and users, how many were evaluated.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_summary(metrics) AS TABLE
    SELECT k, fsum(dcg) / count(dcg) AS dcg, fsum(idcg) / count(idcg) AS idcg,
           fsum(ndcg) / count(ndcg) AS ndcg, fsum(cg) / count(cg) AS cg,
           fsum(precision) / count(precision) AS precision, fsum(recall) / count(recall) AS recall,
           fsum(hit_rate) / count(hit_rate) AS hit_rate, fsum(mrr) / count(mrr) AS mrr,
           fsum(map) / count(map) AS map, fsum(r_precision) / count(r_precision) AS r_precision,
           sum(num_rel) AS num_rel, sum(num_rel_ret) AS num_rel_ret,
           fsum(judged) / count(judged) AS judged, fsum(ncg) / count(ncg) AS ncg,
           fsum(err) / count(err) AS err, fsum(bpref) / count(bpref) AS bpref,
           fsum(rbp) / count(rbp) AS rbp,
           sum(num_ret) AS num_ret, sum(num_nonrel_judged_ret) AS num_nonrel_judged_ret,
           fsum(set_precision) / count(set_precision) AS set_precision,
           fsum(set_relative_precision) / count(set_relative_precision) AS set_relative_precision,
           fsum(set_map) / count(set_map) AS set_map, fsum(set_f) / count(set_f) AS set_f,
           fsum(relative_precision) / count(relative_precision) AS relative_precision,
           fsum(iprec_11pt_avg) / count(iprec_11pt_avg) AS iprec_11pt_avg,
           fsum(infap) / count(infap) AS infap, fsum(rndcg) / count(rndcg) AS rndcg,
           fsum(ndcg_rel) / count(ndcg_rel) AS ndcg_rel,
           fsum(rbp_resid) / count(rbp_resid) AS rbp_resid,
           fsum(utility) / count(utility) AS utility, fsum(unj) / count(unj) AS unj,
           fsum(g) / count(g) AS g, fsum(bing) / count(bing) AS bing,
           exp(fsum(gm_map) / count(gm_map)) AS gm_map,
           exp(fsum(gm_bpref) / count(gm_bpref)) AS gm_bpref,
           count(*) AS users
    FROM query_table(metrics)
    GROUP BY k;

-- ndcg_metric_values(metrics): a ndcg_metrics_evaluated result as one row per user, metric and
-- cutoff: user_id, metric (its name, as ndcg_metric_name writes it), k (NULL: none) and value
-- (a DOUBLE; NULL values, such as precision without a cutoff, leave no row); then, on the row of
-- users with no cutoff, iprec_at_recall_x at trec_eval's levels (ndcg_iprec_levels) and
-- rprec_mult_x at its multiples (ndcg_rprec_multiples), x to 2 decimals as trec_eval prints it.
CREATE OR REPLACE TEMP MACRO ndcg_metric_values(metrics) AS TABLE
    SELECT user_id, ndcg_metric_name(metric, k) AS metric,
           CASE WHEN metric NOT IN ('r_precision', 'num_rel', 'num_rel_ret', 'bpref', 'rbp',
                                    'num_ret', 'num_nonrel_judged_ret', 'set_precision',
                                    'set_relative_precision', 'set_map', 'set_f',
                                    'iprec_11pt_avg', 'infap', 'rndcg', 'ndcg_rel',
                                    'rbp_resid', 'utility', 'g', 'bing', 'gm_map', 'gm_bpref')
                THEN k END AS k,
           value
    FROM (UNPIVOT (SELECT user_id, k, dcg, idcg, ndcg, cg, precision, recall, hit_rate, mrr, map,
                          r_precision, num_rel::DOUBLE AS num_rel,
                          num_rel_ret::DOUBLE AS num_rel_ret, judged, ncg, err, bpref, rbp,
                          num_ret::DOUBLE AS num_ret,
                          num_nonrel_judged_ret::DOUBLE AS num_nonrel_judged_ret, set_precision,
                          set_relative_precision, set_map, set_f, relative_precision,
                          iprec_11pt_avg,
                          infap, rndcg, ndcg_rel, rbp_resid, utility, unj, g, bing, gm_map,
                          gm_bpref
                   FROM query_table(metrics))
          ON dcg, idcg, ndcg, cg, precision, recall, hit_rate, mrr, map, r_precision, num_rel,
             num_rel_ret, judged, ncg, err, bpref, rbp, num_ret, num_nonrel_judged_ret,
             set_precision, set_relative_precision, set_map, set_f, relative_precision,
             iprec_11pt_avg,
             infap, rndcg, ndcg_rel, rbp_resid, utility, unj, g, bing, gm_map, gm_bpref
          INTO NAME metric VALUE value)
    UNION ALL  -- trec_eval's iprec_at_recall and Rprec_mult at its levels, from the first row
    SELECT user_id, 'iprec_at_recall_' || printf('%.2f', level), NULL::BIGINT,
           ndcg_iprec_at_recall(relevant_ranks, num_relevant, level)
    FROM query_table(metrics), (SELECT unnest(ndcg_iprec_levels()) AS level)
    WHERE num_rel IS NOT NULL
    UNION ALL
    SELECT user_id, 'rprec_mult_' || printf('%.2f', multiple), NULL::BIGINT,
           ndcg_rprec_mult(relevant_ranks, num_relevant, multiple)
    FROM query_table(metrics), (SELECT unnest(ndcg_rprec_multiples()) AS multiple)
    WHERE num_rel IS NOT NULL;

-- ndcg_metric_scores(rankings, judgments, ks, missing, idcg_cutoff, empty, judged_only, ties,
-- rbp_p, set_f_beta, utility_weights, num_docs):
-- every metric of each evaluated user at each cutoff, as ndcg_scores does for NDCG: rankings as
-- a ranking edge returns it, judgments as ndcg_judgments does. Returns user_id, metric, k, value
-- (see ndcg_metric_values).
CREATE OR REPLACE TEMP MACRO ndcg_metric_scores(rankings, judgments, ks := [10],
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', judged_only := false,
        ties := 'trec', rbp_p := 0.9, set_f_beta := 1.0,
        utility_weights := [1.0, -1.0, 0.0, 0.0], num_docs := 0) AS TABLE
    WITH ndcg_all_ AS (
        FROM ndcg_user_metrics(rankings, judgments, ks := ks, idcg_cutoff := idcg_cutoff,
                               judged_only := judged_only, ties := ties, rbp_p := rbp_p,
                               set_f_beta := set_f_beta, utility_weights := utility_weights,
                               num_docs := num_docs, edge_gains := false)),
    ndcg_evaluated_ AS (FROM ndcg_metrics_evaluated('ndcg_all_', missing := missing,
                                                    empty := empty))
    FROM ndcg_metric_values('ndcg_evaluated_');

-- Every metric per user and on average at one cutoff k, for each recommendation layout, as
-- ndcg_tables.sql does for NDCG: the same recs and rels, the same options (k, gain, gain_map,
-- min_relevance, missing, idcg_cutoff, empty, max_depth, judged_only and, for rankings by score,
-- ties), and the same checks of rels. The metrics are those at k (dcg, idcg, ndcg, cg,
-- precision, relative_precision, recall, hit_rate, mrr, map, judged, ncg, err; k := 'all' gives
-- each without a cutoff, and no precision) and r_precision, num_rel, num_rel_ret, bpref, rbp,
-- num_ret, num_nonrel_judged_ret and the set measures, which read each whole ranking (up to
-- max_depth).

-- ndcg_metrics_per_user_of(rankings, rels, k, ...): what the wrappers share: rels through the
-- judgments edge, then ndcg_metric_scores at the one cutoff k over rankings (a ranking edge's
-- result, by name). Returns user_id, metric (e.g. 'recall@10', 'r_precision'), value: one row per
-- evaluated user and metric.
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user_of(rankings, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', gain_map := NULL,
        judged_only := false, min_relevance := NULL, ties := 'trec') AS TABLE
    WITH ndcg_judgments_ AS (
        FROM ndcg_judgments(rels, gain := ndcg_choice('gain', gain, ['linear', 'exponential', 'binary']),
                            gain_map := ndcg_gain_map(gain_map), min_relevance := min_relevance,
                            ideal_depth := ndcg_width(ndcg_k(k))))
    SELECT user_id, metric, value
    FROM ndcg_metric_scores(rankings, 'ndcg_judgments_', ks := ndcg_k(k),
                            missing := ndcg_choice('missing', missing, ['zero', 'skip']),
                            idcg_cutoff := ndcg_choice('idcg_cutoff', idcg_cutoff, ['k', 'list']),
                            empty := ndcg_choice('empty', empty, ['zero', 'skip']),
                            judged_only := ndcg_flag('judged_only', judged_only),
                            ties := ndcg_choice('ties', ties, ['trec', 'average']));

-- ndcg_metrics_per_user(recs, rels, ...): recs nested (user_id, items LIST in rank order).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_lists(recs, depth := ndcg_max_depth(max_depth)))
    FROM ndcg_metrics_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                                  idcg_cutoff := idcg_cutoff, empty := empty,
                                  gain_map := gain_map, judged_only := judged_only,
                                  min_relevance := min_relevance);

-- ndcg_metrics_per_user_ranks(recs, rels, ...): recs long (user_id, item_id, rank).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_ranks(recs, depth := ndcg_max_depth(max_depth)))
    FROM ndcg_metrics_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                                  idcg_cutoff := idcg_cutoff, empty := empty,
                                  gain_map := gain_map, judged_only := judged_only,
                                  min_relevance := min_relevance);

-- ndcg_metrics_per_user_scores(recs, rels, ...): recs long (user_id, item_id, score), ranked by
-- score descending, equal scores by item id descending as text; ties 'average' averages the DCG
-- family over each tie (the other metrics keep that order).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_per_user_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec', min_relevance := NULL) AS TABLE
    WITH ndcg_ranked_ AS (FROM ndcg_ranked_scores(recs, depth := ndcg_max_depth(max_depth),
                                                  ties := ndcg_choice('ties', ties, ['trec', 'average'])))
    FROM ndcg_metrics_per_user_of('ndcg_ranked_', rels, k := k, gain := gain, missing := missing,
                                  idcg_cutoff := idcg_cutoff, empty := empty,
                                  gain_map := gain_map, judged_only := judged_only,
                                  min_relevance := min_relevance, ties := ties);

-- ndcg_metrics_summed(per_user): the rows of one of the three macros above summed up: metric,
-- value (the mean over the users; for num_rel, num_rel_ret, num_ret and num_nonrel_judged_ret
-- the sum; for gm_map and gm_bpref exp of the mean, their geometric mean) and users (how many).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_summed(per_user) AS TABLE
    SELECT metric,
           CASE WHEN metric IN ('gm_map', 'gm_bpref') THEN exp(fsum(value) / count(*))
                ELSE fsum(value) / CASE WHEN metric IN ('num_rel', 'num_rel_ret', 'num_ret',
                                                        'num_nonrel_judged_ret')
                                        THEN 1 ELSE count(*) END END AS value,
           count(*) AS users
    FROM query_table(per_user)
    GROUP BY metric;

-- ndcg_metrics_mean(recs, rels, ...) and its _ranks and _scores twins: one row per metric:
-- metric, value (the mean over evaluated users; the sum for num_rel, num_rel_ret, num_ret and
-- num_nonrel_judged_ret) and users (how many were evaluated).
CREATE OR REPLACE TEMP MACRO ndcg_metrics_mean(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_per_user_ AS (
        FROM ndcg_metrics_per_user(recs, rels, k := k, gain := gain, missing := missing,
                                   idcg_cutoff := idcg_cutoff, empty := empty,
                                   max_depth := max_depth, gain_map := gain_map,
                                   judged_only := judged_only, min_relevance := min_relevance))
    FROM ndcg_metrics_summed('ndcg_per_user_');

CREATE OR REPLACE TEMP MACRO ndcg_metrics_mean_ranks(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, min_relevance := NULL) AS TABLE
    WITH ndcg_per_user_ AS (
        FROM ndcg_metrics_per_user_ranks(recs, rels, k := k, gain := gain, missing := missing,
                                         idcg_cutoff := idcg_cutoff, empty := empty,
                                         max_depth := max_depth, gain_map := gain_map,
                                         judged_only := judged_only,
                                         min_relevance := min_relevance))
    FROM ndcg_metrics_summed('ndcg_per_user_');

CREATE OR REPLACE TEMP MACRO ndcg_metrics_mean_scores(recs, rels, k := 10, gain := 'linear',
        missing := 'zero', idcg_cutoff := 'k', empty := 'zero', max_depth := NULL,
        gain_map := NULL, judged_only := false, ties := 'trec', min_relevance := NULL) AS TABLE
    WITH ndcg_per_user_ AS (
        FROM ndcg_metrics_per_user_scores(recs, rels, k := k, gain := gain, missing := missing,
                                          idcg_cutoff := idcg_cutoff, empty := empty,
                                          max_depth := max_depth, gain_map := gain_map,
                                          judged_only := judged_only, ties := ties,
                                          min_relevance := min_relevance))
    FROM ndcg_metrics_summed('ndcg_per_user_');
