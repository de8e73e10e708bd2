"""Level 0 fusion of the word and meaning rankings: normalized scores, weighed (docs/search.md)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import pytest

from skills_app.domain.search_text import ScoredRanking, reciprocal_rank_fusion, score_fusion
from skills_app.selectors.search import fuse_by_rank, fuse_by_score, semantic


def _order(fused: Sequence[tuple[Hashable, float]]) -> list[Hashable]:
    return [item for item, _ in fused]


def test_a_clear_winner_by_meaning_beats_a_narrow_lead_by_words() -> None:
    # "b" leads the words by a hair and is far down by meaning; "a" is second by words and far
    # ahead by meaning. Reciprocal rank sees only the ranks (a tie: first appearance wins);
    # score fusion sees the margins.
    words = [("b", 10.0), ("a", 9.9), ("c", 1.0)]
    meaning = [("a", 0.80), ("b", 0.30), ("c", 0.29)]
    assert _order(reciprocal_rank_fusion(_order(words), _order(meaning)))[0] == "b"
    fused = score_fusion(ScoredRanking(words, 0.35, 0.0), ScoredRanking(meaning, 0.65, 0.2))
    assert _order(fused) == ["a", "b", "c"]


def test_the_weights_decide_between_the_rankings() -> None:
    words = [("w", 5.0), ("m", 1.0)]
    meaning = [("m", 0.9), ("w", 0.3)]
    assert (
        _order(score_fusion(ScoredRanking(words, 0.8, 0.0), ScoredRanking(meaning, 0.2, 0.2)))[0]
        == "w"
    )
    assert (
        _order(score_fusion(ScoredRanking(words, 0.2, 0.0), ScoredRanking(meaning, 0.8, 0.2)))[0]
        == "m"
    )


def test_an_item_a_ranking_left_out_counts_as_that_rankings_floor() -> None:
    # "x" is found by words only. With the meaning floor low it scores below "y" (held by both);
    # a floor as high as y's own cosine leaves x with the better word score on top.
    words = [("x", 4.0), ("y", 3.0)]
    meaning = [("y", 0.5), ("z", 0.45)]
    low = score_fusion(ScoredRanking(words, 0.5, 0.0), ScoredRanking(meaning, 0.5, 0.0))
    high = score_fusion(ScoredRanking(words, 0.5, 0.0), ScoredRanking(meaning, 0.5, 0.5))
    assert _order(low)[0] == "y"
    assert _order(high)[0] == "x"


@pytest.mark.parametrize("normalize", ["z", "minmax"])
def test_scores_are_best_first_between_zero_and_one(normalize: str) -> None:
    words = [("a", 7.0), ("b", 2.0), ("c", 1.5)]
    meaning = [("c", 0.7), ("d", 0.6), ("a", 0.25)]
    fused = score_fusion(
        ScoredRanking(words, 0.35, 0.0), ScoredRanking(meaning, 0.65, 0.2), normalize=normalize
    )
    scores = [score for _, score in fused]
    assert {item for item, _ in fused} == {"a", "b", "c", "d"}
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < score < 1.0 for score in scores)


def test_an_empty_ranking_adds_nothing() -> None:
    meaning = [("p", 0.9), ("q", 0.5), ("r", 0.3)]
    fused = score_fusion(ScoredRanking([], 0.35, 0.0), ScoredRanking(meaning, 0.65, 0.2))
    assert _order(fused) == ["p", "q", "r"]
    # A lone hit (all scores equal) still has a positive score.
    [(item, score)] = score_fusion(
        ScoredRanking([], 0.35, 0.0), ScoredRanking([("p", 0.9)], 0.65, 0.2)
    )
    assert item == "p"
    assert score > 0


def test_level0_fusion_takes_a_full_word_rankings_last_score_as_its_floor() -> None:
    # Skill 3 is found by meaning only. Cut at the pool (2 here), the word ranking says only
    # that 3 scores at most 9.0; had it ended on its own (pool 3), 3 holds none of the words.
    words = [(1, 10.0), (2, 9.0)]
    meaning = [(3, 0.9), (1, 0.5), (2, 0.4)]
    cut = dict(fuse_by_score(words, meaning, 2, lexical_weight=0.5))
    ended = dict(fuse_by_score(words, meaning, 3, lexical_weight=0.5))
    assert cut[3] > ended[3]


def test_a_skill_the_meaning_ranking_lacks_counts_as_its_last_cosine() -> None:
    # The meaning ranking is the nearest skills whatever their cosine: one it does not hold is
    # no nearer than its last, even under MIN_SIMILARITY, and ties with it.
    words = [(3, 10.0), (4, 10.0)]
    meaning = [(1, 0.62), (4, 0.05)]
    fused = dict(fuse_by_score(words, meaning, 50, lexical_weight=0.5))
    assert fused[3] == pytest.approx(fused[4])
    assert semantic.MIN_SIMILARITY > 0.05


def test_a_skill_with_no_vector_yet_is_not_as_near_as_the_last_of_a_short_ranking() -> None:
    # Shorter than the pool, the meaning ranking holds every skill with a vector: one it lacks
    # has none yet (not embedded), and counts as not about the query (MIN_SIMILARITY), not as
    # near as the only skill it holds. The words tie: meaning decides.
    words = [(1, 5.0), (2, 5.0)]
    meaning = [(2, 0.8)]
    fused = dict(fuse_by_score(words, meaning, 50, lexical_weight=0.35))
    assert fused[2] > fused[1]
    full = [(2, 0.8), *((pk, 0.7) for pk in range(10, 59))]  # cut at the pool: 1 is at most 0.7
    fused = dict(fuse_by_score(words, full, 50, lexical_weight=0.35))
    ended = dict(fuse_by_score(words, full[:20], 50, lexical_weight=0.35))
    assert fused[1] > ended[1]


def test_the_rrf_baseline_is_reciprocal_rank() -> None:
    fused = fuse_by_rank([(1, 9.0), (2, 1.0)], [(2, 0.9), (3, 0.5)], 50)
    assert _order(fused) == [2, 1, 3]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
