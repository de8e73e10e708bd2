"""Level 0 search quality on a tuning part and a held-out part, beside BM25 and an RRF baseline.

    python -m bench.search_quality            # PostgreSQL
    python -m bench.search_quality --sqlite   # the embedded default
    python -m bench.search_quality --sweep    # fusion weights, on the tuning part only
    python -m bench.search_quality --bm25f-sweep  # BM25F's b and k1, on the tuning part only
    python -m bench.search_quality --mpnet DIR  # also all-mpnet-base-v2, fused offline

Each task of ``bench/search_eval`` by the three systems in one run, fresh database: hit@1/3/10,
MRR, paraphrase hit@3 per split (``BENCH_SEARCH_MISSES=1``: misses). Method: docs/search.md."""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.recall import DEFAULT_DB as RECALL_DB
from bench.recall import _django, _env

EVAL = Path(__file__).resolve().parent / "search_eval"
# The second set (docs/search.md, *The evaluation sets*): other repositories, its own skills,
# every task held out.
UNSEEN = EVAL / "unseen"
# The third set (docs/search.md, *The evaluation sets*): more tuning tasks, on other repositories.
TUNE2 = EVAL / "tune2"
DATABASE_NAME = "xmemo_search_eval"
USERNAME = "search-eval"
UNSEEN_USERNAME = f"{USERNAME}-unseen"  # the second set's own personal workspace
TUNE2_USERNAME = f"{USERNAME}-tune2"
METRICS = ("hit@1", "hit@3", "hit@10", "MRR", "para@3")
SPLITS = ("tune", "held_out", "unseen", "tune2")
TUNING = ("tune", "tune2")  # what a choice may look at
# What --sweep tries, on the tuning part only: the word ranking's weight, per normalization.
SWEEP_WEIGHTS = (0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)
SWEEP_NORMALIZE = ("minmax", "z")
# What --bm25f-sweep tries, on the tuning part only: BM25F's length normalisation b per field
# (name, description, body start) and k1, each moved alone from the served values, then a few
# together; the first row is the served setting.
BM25F_SWEEP: tuple[tuple[tuple[float, float, float], float], ...] = (
    ((0.5, 0.75, 0.75), 1.2),
    ((0.25, 0.75, 0.75), 1.2),
    ((0.75, 0.75, 0.75), 1.2),
    ((0.5, 0.0, 0.75), 1.2),
    ((0.5, 0.25, 0.75), 1.2),
    ((0.5, 0.5, 0.75), 1.2),
    ((0.5, 1.0, 0.75), 1.2),
    ((0.5, 0.75, 0.25), 1.2),
    ((0.5, 0.75, 0.5), 1.2),
    ((0.5, 0.75, 1.0), 1.2),
    ((0.5, 0.75, 0.75), 0.3),
    ((0.5, 0.75, 0.75), 0.5),
    ((0.5, 0.75, 0.75), 0.8),
    ((0.5, 0.75, 0.75), 1.0),
    ((0.5, 0.75, 0.75), 1.6),
    ((0.5, 0.75, 0.75), 2.0),
    ((0.5, 0.5, 0.5), 1.2),
    ((0.5, 0.5, 0.75), 0.8),
    ((0.25, 0.5, 0.5), 1.5),
)


@dataclass(frozen=True)
class Task:
    query: str
    expect: str
    kind: str
    split: str


def load_skills(folder: Path = EVAL) -> list[dict[str, str]]:
    skills: list[dict[str, str]] = []
    for path in sorted(folder.glob("skills_*.yaml")):
        skills += yaml.safe_load(path.read_text(encoding="utf-8"))
    return skills


def load_tasks(folder: Path = EVAL) -> list[Task]:
    rows: list[dict[str, str]] = []
    for path in sorted(folder.glob("tasks*.yaml")):
        rows += yaml.safe_load(path.read_text(encoding="utf-8"))
    tasks = [Task(query=r["q"], expect=r["expect"], kind=r["kind"], split=r["split"]) for r in rows]
    unknown = {t.split for t in tasks} - set(SPLITS)
    if unknown:
        raise SystemExit(f"Unknown split(s) in {EVAL}: {sorted(unknown)}")
    return tasks


def metrics(ranked: list[list[str]], tasks: list[Task]) -> dict[str, float]:
    """hit@k: the expected skill is among the first k; MRR: mean of 1/rank (0 beyond 10);
    para@3: hit@3 over the tasks phrased in other words than the skill's (kind ``other``)."""
    hits = {1: 0, 3: 0, 10: 0}
    reciprocal = 0.0
    paraphrases = paraphrase_hits = 0
    for slugs, task in zip(ranked, tasks, strict=True):
        rank = slugs.index(task.expect) + 1 if task.expect in slugs[:10] else 0
        if rank:
            reciprocal += 1 / rank
            for k in hits:
                hits[k] += rank <= k
        if task.kind == "other":
            paraphrases += 1
            paraphrase_hits += 0 < rank <= 3
    n = len(tasks) or 1
    return {
        "hit@1": hits[1] / n,
        "hit@3": hits[3] / n,
        "hit@10": hits[10] / n,
        "MRR": reciprocal / n,
        "para@3": paraphrase_hits / (paraphrases or 1),
    }


def _database_url() -> str:
    explicit = os.environ.get("BENCH_SEARCH_DATABASE_URL")
    if explicit:
        return explicit
    # Never the recall bench's own database: this one is dropped on every run.
    server = urllib.parse.urlparse(os.environ.get("BENCH_DATABASE_URL", RECALL_DB))
    return server._replace(path=f"/{DATABASE_NAME}").geturl()


def _fresh_database(db_url: str) -> None:
    import psycopg

    if db_url.startswith("sqlite:"):
        Path(urllib.parse.urlparse(db_url).path).unlink(missing_ok=True)
        return
    parsed = urllib.parse.urlparse(db_url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _publish_all(skills: list[dict[str, str]], username: str = USERNAME) -> Any:
    """Publish every skill in a personal workspace; returns an agent's read-token actor."""
    from skills_app.access import Actor
    from skills_app.domain.bundle import SkillBundle
    from skills_app.models import Workspace
    from skills_app.services.accounts import token_create, user_create
    from skills_app.services.skills import skill_save

    user = user_create(username=username)
    workspace = Workspace.objects.get(slug=username)
    owner = Actor(user=user, via="cli")
    for skill in skills:
        skill_save(
            actor=owner,
            workspace=workspace,
            slug=skill["slug"],
            bundle=SkillBundle(
                name=skill["name"],
                description=skill["description"],
                frontmatter={},
                instruction_body=skill["body"],
                components=(),
            ),
            intent="publish",
        )
    token, _ = token_create(actor=owner, user=user, name="eval", scopes=["skills:read"])
    return Actor(user=user, token=token, via="api")


def _embed_all() -> None:
    """What the workers do after each save, all at once (the same service)."""
    from skills_app.encoder import embedding
    from skills_app.services.embeddings import embeddings_catch_up

    if embedding.encoder() is None:
        print("No embedding model installed: Level 0 ranks by words alone.")
        return
    counts = embeddings_catch_up()
    print(f"{counts.stored} skills embedded")


# The offline lexical part: textbook BM25 (bm25s, Lucene's variant, k1 1.5, b 0.75) over the
# name, the description and the body's first characters, with Level 0's stemmer.
OFFLINE_BODY = 1000
OFFLINE_POOL = 50


def _bm25_scored(skills: list[dict[str, str]], tasks: list[Task]) -> list[list[tuple[int, float]]]:
    """Each task's best ``OFFLINE_POOL`` skills (their index in ``skills``) by plain BM25."""
    import bm25s
    import snowballstemmer

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # its index build logs at DEBUG
    stemmer = snowballstemmer.stemmer("english")
    corpus = [f"{s['name']} {s['description']} {s['body'][:OFFLINE_BODY]}" for s in skills]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    ranked: list[list[tuple[int, float]]] = []
    for task in tasks:
        tokens = bm25s.tokenize([task.query], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:  # only stop words: BM25 has nothing to rank
            ranked.append([])
            continue
        docs, scores = retriever.retrieve(tokens, k=OFFLINE_POOL, show_progress=False)
        ranked.append(
            [(int(d), float(v)) for d, v in zip(docs[0], scores[0], strict=True) if v > 0]
        )
    return ranked


def _bm25(skills: list[dict[str, str]], tasks: list[Task]) -> list[list[str]]:
    return [[skills[i]["slug"] for i, _ in hits[:10]] for hits in _bm25_scored(skills, tasks)]


def _cosines(
    skills: list[dict[str, str]], tasks: list[Task], workspace: str
) -> list[list[tuple[int, float]]]:
    """Each task's best ``OFFLINE_POOL`` skills by the cosine of the served encoder's vectors
    (the stored documents' of ``workspace``, where the set was published; the query's as a
    search computes it), exact, over every skill; equal cosines in the set's order."""
    import numpy as np

    from skills_app.encoder import embedding
    from skills_app.models import RevisionEmbedding, Skill
    from skills_app.selectors.search import semantic

    # The set's own workspace: both sets hold a few skills of the same slug.
    current = dict(
        Skill.objects.filter(workspace__slug=workspace).values_list("current_revision_id", "slug")
    )
    stored = {
        current[revision]: embedding.vector_from_bytes(bytes(vector))
        for revision, vector in RevisionEmbedding.objects.filter(
            revision_id__in=list(current)
        ).values_list("revision_id", "vector")
    }
    matrix = np.stack([stored[s["slug"]] for s in skills])
    ranked = []
    for task in tasks:
        cosine = matrix @ semantic.query_vector(task.query)
        best = np.argsort(-cosine, kind="stable")[:OFFLINE_POOL]
        ranked.append([(int(i), float(cosine[i])) for i in best])
    return ranked


def _offline_fusion(
    skills: list[dict[str, str]], tasks: list[Task], workspace: str
) -> list[list[str]]:
    """The same lexical and encoder parts fused offline, outside Level 0: plain BM25 and exact
    cosine over every skill, z-scores at Level 0's lexical weight (``fuse_by_score``)."""
    from skills_app.selectors.search import fuse_by_score

    return [
        [skills[i]["slug"] for i, _ in fuse_by_score(words, meaning, OFFLINE_POOL)[:10]]
        for words, meaning in zip(
            _bm25_scored(skills, tasks), _cosines(skills, tasks, workspace), strict=True
        )
    ]


@functools.cache
def _mpnet(model_dir: Path) -> tuple[Any, Any]:
    """all-mpnet-base-v2 as ``bench.encoders`` runs it: float32 for documents, int8 for queries."""
    from bench.encoders import MPNetEncoder

    return MPNetEncoder(model_dir, integer=False), MPNetEncoder(model_dir, integer=True)


def _mpnet_cosines(
    model_dir: Path, skills: list[dict[str, str]], tasks: list[Task]
) -> list[list[tuple[int, float]]]:
    """Each task's best ``OFFLINE_POOL`` skills by mpnet's cosine, exact, over every skill's
    descriptor (the text the served encoder embeds)."""
    import numpy as np

    from skills_app.domain.descriptor import descriptor_text

    documents, queries = _mpnet(model_dir)
    texts = [
        descriptor_text(name=s["name"], description=s["description"], body=s["body"])
        for s in skills
    ]
    matrix = np.concatenate([documents.encode(texts[i : i + 8]) for i in range(0, len(texts), 8)])
    ranked = []
    for task in tasks:
        cosine = matrix @ queries.encode([task.query])[0]
        best = np.argsort(-cosine, kind="stable")[:OFFLINE_POOL]
        ranked.append([(int(i), float(cosine[i])) for i in best])
    return ranked


def _three_way(
    words: list[tuple[int, float]],
    minilm: list[tuple[int, float]],
    mpnet: list[tuple[int, float]],
) -> list[tuple[int, float]]:
    """BM25 and both encoders' cosines, z-scored: the words at Level 0's lexical weight, the
    rest shared evenly by the encoders; floors as ``fuse_by_score``'s."""
    from skills_app.domain.search_text import LEXICAL_WEIGHT, ScoredRanking, score_fusion
    from skills_app.selectors.search import semantic

    def floor(hits: list[tuple[int, float]], nothing: float) -> float:
        return hits[-1][1] if len(hits) >= OFFLINE_POOL else nothing

    meaning = (1.0 - LEXICAL_WEIGHT) / 2
    fused = score_fusion(
        ScoredRanking(words, LEXICAL_WEIGHT, floor(words, 0.0)),
        ScoredRanking(minilm, meaning, floor(minilm, semantic.MIN_SIMILARITY)),
        ScoredRanking(mpnet, meaning, floor(mpnet, semantic.MIN_SIMILARITY)),
        normalize="z",
    )
    return [(int(pk), score) for pk, score in fused]  # type: ignore[call-overload]


def _mpnet_systems(
    model_dir: Path, skills: list[dict[str, str]], tasks: list[Task], workspace: str
) -> dict[str, list[list[str]]]:
    """mpnet alone, BM25 + mpnet and BM25 + MiniLM + mpnet, all fused offline."""
    from skills_app.selectors.search import fuse_by_score

    words, minilm = _bm25_scored(skills, tasks), _cosines(skills, tasks, workspace)
    mpnet = _mpnet_cosines(model_dir, skills, tasks)

    def slugs(hits: list[tuple[int, float]]) -> list[str]:
        return [skills[i]["slug"] for i, _ in hits[:10]]

    return {
        "offline mpnet alone": [slugs(m) for m in mpnet],
        "offline BM25 + mpnet": [
            slugs(fuse_by_score(w, m, OFFLINE_POOL)) for w, m in zip(words, mpnet, strict=True)
        ],
        "offline BM25 + MiniLM + mpnet": [
            slugs(_three_way(w, e, m)) for w, e, m in zip(words, minilm, mpnet, strict=True)
        ],
    }


def _level0(actor: Any, tasks: list[Task]) -> list[list[str]]:
    """Level 0 as served: the public selector."""
    from skills_app.selectors.recall import recall_search

    return [
        [
            hit["slug"]
            for hit in recall_search(actor=actor, query=t.query, limit=10)["data"]["results"]
        ]
        for t in tasks
    ]


def _fused(actor: Any, tasks: list[Task], fusion: Callable[..., Any]) -> list[list[str]]:
    """The same two rankings and the same gate as Level 0, fused by ``fusion``."""
    from skills_app.selectors.search import search_skills

    return [
        [
            hit["slug"]
            for hit in search_skills(
                actor=actor, text=t.query, workspace=None, limit=10, fusion=fusion
            )
        ]
        for t in tasks
    ]


def _table(rows: dict[str, dict[str, float]], digits: int = 2) -> str:
    lines = [f"{'':<34}" + "".join(f"{n:>8}" for n in METRICS)]
    for label, values in rows.items():
        lines.append(f"{label:<34}" + "".join(f"{values[n]:>8.{digits}f}" for n in METRICS))
    return "\n".join(lines)


@contextlib.contextmanager
def _bm25f(b: tuple[float, float, float], k1: float) -> Iterator[None]:
    """Level 0's BM25F with this b per field and this k1 inside the block (one process)."""
    from skills_app.domain import search_text

    served = search_text.FIELD_B, search_text.K1
    search_text.FIELD_B, search_text.K1 = b, k1
    try:
        yield
    finally:
        search_text.FIELD_B, search_text.K1 = served


def _bm25f_sweep(
    actor: Any,
    tasks: list[Task],
    settings: Sequence[tuple[tuple[float, float, float], float]] = BM25F_SWEEP,
) -> dict[str, dict[str, float]]:
    """Level 0 as served on the tuning tasks only, under each BM25F setting (b per field, k1)."""
    tune = [t for t in tasks if t.split == "tune"]
    rows: dict[str, dict[str, float]] = {}
    for b, k1 in settings:
        with _bm25f(b, k1):
            label = f"b {b[0]:.2f}/{b[1]:.2f}/{b[2]:.2f} k1 {k1:.2f}"
            rows[label] = metrics(_level0(actor, tune), tune)
    return rows


def _sweep(actor: Any, tasks: list[Task]) -> None:
    """Score fusion's weight and normalization against the tuning tasks only."""
    from skills_app.selectors.search import fuse_by_rank, fuse_by_score

    tune = [t for t in tasks if t.split == "tune"]
    rows = {"RRF k=60": metrics(_fused(actor, tune, fuse_by_rank), tune)}
    for normalize in SWEEP_NORMALIZE:
        for weight in SWEEP_WEIGHTS:
            fusion = functools.partial(fuse_by_score, lexical_weight=weight, normalize=normalize)
            rows[f"{normalize} lexical {weight:.2f}"] = metrics(_fused(actor, tune, fusion), tune)
    print(f"Tuning part only ({len(tune)} tasks):")
    print(_table(rows))


OFFLINE = "offline fusion (BM25 + encoder)"
AGAINST = ("hit@1", "hit@3", "MRR")  # what a held-out part compares, served against offline


def against_offline(served: dict[str, float], offline: dict[str, float]) -> str:
    """Level 0 beside the offline fusion of the same parts, to three places, and where (if
    anywhere) it is below."""
    pairs = ", ".join(f"{n} {served[n]:.3f} / {offline[n]:.3f}" for n in AGAINST)
    below = [n for n in AGAINST if served[n] < offline[n] - 1e-9]
    verdict = f"BELOW on {', '.join(below)}" if below else "at least as good on each"
    return f"Level 0 / offline fusion: {pairs}: {verdict}"


def _report(
    actor: Any,
    skills: list[dict[str, str]],
    tasks: list[Task],
    mpnet: Path | None = None,
    *,
    workspace: str,
) -> dict[str, list[list[str]]]:
    """Print each split's table for one set; return each system's rankings, one per task."""
    from skills_app.selectors.search import fuse_by_rank

    systems = {
        "BM25": _bm25(skills, tasks),
        "Level 0 words alone": _fused(actor, tasks, lambda words, meaning, pool: words),
        "Level 0 meaning alone": _fused(actor, tasks, lambda words, meaning, pool: meaning),
        "RRF baseline (same rankings)": _fused(actor, tasks, fuse_by_rank),
    }
    from skills_app.encoder import embedding

    if embedding.encoder() is not None:
        systems[OFFLINE] = _offline_fusion(skills, tasks, workspace)
        if mpnet is not None:
            systems.update(_mpnet_systems(mpnet, skills, tasks, workspace))
    systems["Level 0"] = _level0(actor, tasks)
    for split in SPLITS:
        chosen = [i for i, t in enumerate(tasks) if t.split == split]
        if not chosen:
            continue
        part = [tasks[i] for i in chosen]
        paraphrases = sum(t.kind == "other" for t in part)
        print(f"\n{split} ({len(part)} tasks, {paraphrases} in other words):")
        rows = {name: metrics([r[i] for i in chosen], part) for name, r in systems.items()}
        print(_table(rows))
        if split not in TUNING and OFFLINE in rows:
            print(against_offline(rows["Level 0"], rows[OFFLINE]))
    if os.environ.get("BENCH_SEARCH_MISSES"):
        for slugs, task in zip(systems["Level 0"], tasks, strict=True):
            if task.split in TUNING and task.expect not in slugs[:3]:
                print(f"  miss [{task.kind}] {task.query!r} -> {slugs[:3]} (want {task.expect})")
    return systems


def _pooled_tuning(reports: list[tuple[dict[str, list[list[str]]], list[Task]]]) -> str:
    """Every set's tuning tasks as one part, for each system every set reported."""
    names = [name for name in reports[0][0] if all(name in systems for systems, _ in reports)]
    ranked: dict[str, list[list[str]]] = {name: [] for name in names}
    part: list[Task] = []
    for systems, tasks in reports:
        chosen = [i for i, t in enumerate(tasks) if t.split in TUNING]
        part += [tasks[i] for i in chosen]
        for name in names:
            ranked[name] += [systems[name][i] for i in chosen]
    rows = {name: metrics(r, part) for name, r in ranked.items()}
    return f"\ntuning, every set ({len(part)} tasks):\n{_table(rows, digits=3)}"


def run(
    *,
    sqlite: bool = False,
    sweep: bool = False,
    bm25f_sweep: bool = False,
    encoders: dict[str, Any] | None = None,
    dim: int = 0,
    version: str = "",
    vanilla: bool = False,
    mpnet: Path | None = None,
) -> None:
    """Publish the set into a fresh database, embed it, report (or ``sweep``). ``encoders``
    (``{"documents": …, "queries": …}``, vectors ``dim`` wide, stored as ``version``) replace the
    served model for this process: how ``bench.encoders`` measures another model. ``mpnet``:
    all-mpnet-base-v2's folder, fused offline beside the served encoder (and its query time)."""
    if sqlite:
        db_url = f"sqlite:///{Path(tempfile.gettempdir()) / 'xmemo_search_eval.sqlite3'}"
    else:
        db_url = _database_url()
    _fresh_database(db_url)
    _django(_env(db_url, None))  # no Redis: local-memory cache, tasks run in process
    from django.core.management import call_command

    if encoders:
        from skills_app.encoder import embedding

        embedding._loaded.update(encoders)
        embedding.DIM = dim
        embedding.model_version = lambda: version
    if vanilla:
        _untuned()
    call_command("migrate", verbosity=0)
    skills, tasks = load_skills(), load_tasks()
    unseen_skills, unseen_tasks = load_skills(UNSEEN), load_tasks(UNSEEN)
    tune2_skills, tune2_tasks = load_skills(TUNE2), load_tasks(TUNE2)
    print(f"{len(skills)} skills, {len(tasks)} tasks", end="; ")
    print(f"unseen: {len(unseen_skills)} skills, {len(unseen_tasks)} tasks", end="; ")
    print(f"tune2: {len(tune2_skills)} skills, {len(tune2_tasks)} tasks; {_integer_products()}")
    actor = _publish_all(skills)
    unseen_actor = _publish_all(unseen_skills, UNSEEN_USERNAME)
    tune2_actor = _publish_all(tune2_skills, TUNE2_USERNAME)
    _embed_all()
    if sweep:
        _sweep(actor, tasks)
    elif bm25f_sweep:
        print(f"Level 0, tuning part only ({sum(t.split == 'tune' for t in tasks)} tasks):")
        print(_table(_bm25f_sweep(actor, tasks), digits=3))
    else:
        first = _report(actor, skills, tasks, mpnet, workspace=USERNAME)
        _report(unseen_actor, unseen_skills, unseen_tasks, mpnet, workspace=UNSEEN_USERNAME)
        third = _report(tune2_actor, tune2_skills, tune2_tasks, mpnet, workspace=TUNE2_USERNAME)
        print(_pooled_tuning([(first, tasks), (third, tune2_tasks)]))
        if mpnet is not None:
            from bench.encoders import latency_report

            documents, queries = _mpnet(mpnet)
            latency_report(mpnet, documents, queries, [t.query for t in tasks + unseen_tasks])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sqlite", action="store_true", help="the embedded default's SQLite")
    parser.add_argument(
        "--sweep", action="store_true", help="fusion weights on the tuning part (nothing held out)"
    )
    parser.add_argument(
        "--bm25f-sweep",
        action="store_true",
        help="BM25F's b per field and k1 on the tuning part (nothing held out)",
    )
    parser.add_argument(
        "--vanilla",
        action="store_true",
        help="the untuned all-MiniLM-L6-v2 (the package's own weights) in place of the served",
    )
    parser.add_argument(
        "--mpnet",
        type=Path,
        help="all-mpnet-base-v2's folder (as sentence-transformers saves it): adds mpnet alone, "
        "BM25 + mpnet and BM25 + MiniLM + mpnet, fused offline, and mpnet's query time",
    )
    run(**vars(parser.parse_args()))  # the options are run's keywords


def _integer_products() -> str:
    """Which int8 products the query encoder gets here: the query vectors, and so every figure
    of the meaning side, differ a little between a CPU with VNNI and one with AVX2 alone."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8").split()
    except OSError:
        return "CPU flags unknown"
    return "CPU with VNNI" if {"avx512_vnni", "avx_vnni"} & set(flags) else "CPU without VNNI"


def _untuned() -> None:
    """The served encoder without the tuned weights: the packaged graph as it ships."""
    import numpy as np

    from skills_app.encoder import embedding

    empty = Path(tempfile.gettempdir()) / "xmemo-no-weights.npz"
    np.savez(empty)
    embedding.WEIGHTS = empty


if __name__ == "__main__":
    main()
