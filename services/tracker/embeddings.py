"""Sentence vectors for the tracker's semantic search: built in, or an operator's ONNX model.

The built-in encoder needs nothing downloaded: it learns from the organization's
own issues. Each text becomes

- word features: Portuguese Snowball stems (``snowballstemmer``, pure Python)
  of the words outside a short stop list, accents folded after stemming
  ("cobranças" and "cobrança" -> ``cobranc``);
- character features: the 3- and 4-character pieces of those stems, with word
  boundaries, so a typo ("pagameto") still shares most pieces with the word
  ("pagamento");

each block weighted by TF-IDF (sublinear counts) and normalised, then reduced
by latent semantic analysis (a truncated SVD fitted per organization), where
words that occur in the same issues end up close: a query can find an issue
that shares none of its words. The SVD alone blurs what it cannot keep (in a
small organization, a handful of components), so a text's vector is two
halves, each L2-normalised and scaled by the square root of its share: the
features projected on the SVD's components (latent meaning), and the same
features under a fixed random projection (each feature, by a stable hash of
its text, adds its own pseudo-random ``LEXICAL_DIMS``-vector: dot products of
the full features are kept, so exact words and character pieces still count,
including words the fit never saw, which weigh as the rarest known ones). A dot product of two vectors is then
``LATENT_SHARE`` times the latent cosine plus the rest times the lexical one;
issues and queries are encoded the same way (fold-in).

With ``EMBEDDING_MODEL_DIR`` set, a sentence-embedding model exported to ONNX
(``model.onnx`` and a ``tokenizer.json`` of the ``tokenizers`` library) encodes
instead: its token vectors are mean-pooled over the attention mask (a model
whose output is already one vector per text is used as is).
"""

from __future__ import annotations

import io
import math
import re
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
import snowballstemmer
from scipy import sparse
from threadpoolctl import threadpool_limits

# Common Portuguese function words: they join sentences, they do not say what an issue is about.
STOPWORDS = frozenset(
    [
        "a",
        "ao",
        "aos",
        "as",
        "ate",
        "com",
        "como",
        "da",
        "das",
        "de",
        "dela",
        "dele",
        "deles",
        "do",
        "dos",
        "e",
        "ela",
        "elas",
        "ele",
        "eles",
        "em",
        "entre",
        "era",
        "essa",
        "esse",
        "esta",
        "estao",
        "este",
        "eu",
        "foi",
        "for",
        "ha",
        "isso",
        "isto",
        "ja",
        "la",
        "lhe",
        "mais",
        "mas",
        "me",
        "mesmo",
        "meu",
        "minha",
        "muito",
        "na",
        "nas",
        "nao",
        "nem",
        "no",
        "nos",
        "o",
        "os",
        "ou",
        "para",
        "pela",
        "pelas",
        "pelo",
        "pelos",
        "por",
        "qual",
        "quando",
        "que",
        "quem",
        "se",
        "sem",
        "ser",
        "seu",
        "sua",
        "so",
        "sao",
        "tambem",
        "te",
        "tem",
        "ter",
        "um",
        "uma",
        "umas",
        "uns",
        "vai",
        "voce",
        "ficou",
        "fica",
        "esta",
        "estamos",
        "sobre",
        "apos",
        "depois",
        "antes",
        "ainda",
        "agora",
        "aqui",
        "ali",
        "onde",
        "cada",
        "todo",
        "toda",
        "todos",
        "todas",
        "tudo",
        "outro",
        "outra",
        "outros",
        "outras",
        "nosso",
        "nossa",
    ]
)
WORD = re.compile(r"[^\W_]+", re.UNICODE)
MAX_WORD = 40  # longer "words" are pasted blobs
CHAR_WEIGHT = 0.6  # the character block's share of a text's features (the words': 1)
MAX_DIMS = 64  # latent components at most (96 measured no better: docs/benchmarks.md)
LEXICAL_DIMS = 64
LATENT_SHARE = 0.5
# Documents the SVD is fitted on at most (a random sample of a larger organization):
# the components settle long before, and the fit stays seconds at any size.
FIT_SAMPLE = 20_000
MIN_DOCUMENT_FREQUENCY = 1


def fold(text: str) -> str:
    """Lower-case without accents: "Cobrança" -> "cobranca"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


@cache
def _stemmer():
    return snowballstemmer.stemmer("portuguese")


@cache
def stem(word: str) -> str:
    """The folded Snowball stem of one lower-case word (stemmed before folding: the
    stemmer's suffix rules are written with accents)."""
    return fold(_stemmer().stemWord(word))


def words(text: str) -> list[str]:
    """The text's words, lower-case, accents kept (what ``stem`` takes)."""
    return [w[:MAX_WORD] for w in WORD.findall(text.casefold())]


@lru_cache(maxsize=200_000)
def _word_stem(word: str) -> str | None:
    """A word's stem, or None for a stop word (cached: a corpus repeats its words)."""
    return None if fold(word) in STOPWORDS else stem(word)


def stems(text: str) -> list[str]:
    """The stems a text contributes (stop words left out)."""
    return [s for s in map(_word_stem, words(text)) if s is not None]


@lru_cache(maxsize=200_000)
def char_grams(stem_: str) -> tuple[str, ...]:
    padded = f"<{stem_}>"
    return tuple(padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1))


def features(text: str) -> tuple[Counter, Counter]:
    """A text's word and character feature counts."""
    word_counts = Counter(stems(text))
    char_counts: Counter = Counter()
    for stem_, count in word_counts.items():
        for gram in char_grams(stem_):
            char_counts[gram] += count
    return word_counts, char_counts


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


@dataclass
class LsaModel:
    """One organization's fitted encoder: the vocabularies, their IDF and the SVD components."""

    words: dict[str, int]
    chars: dict[str, int]
    word_idf: np.ndarray
    char_idf: np.ndarray
    components: np.ndarray  # (latent dims, n_words + n_chars), float32
    seed: int = 0

    name = "lsa"

    @property
    def dims(self) -> int:
        return int(self.components.shape[0]) + LEXICAL_DIMS

    def _weighted(self, texts: list[str]):
        """Each text's TF-IDF entries per block, normalised per block and weighted: the known
        features as sparse rows, the unknown ones (idf of the rarest known) by name."""
        rows, cols, values, unknown = [], [], [], []
        offset = len(self.words)
        blocks = (
            (self.words, self._word_idf, self._unseen_word, 0, 1.0),
            (self.chars, self._char_idf, self._unseen_char, offset, CHAR_WEIGHT),
        )
        for row, text in enumerate(texts):
            extra = []
            for counts, (block, idf, unseen, base, weight) in zip(features(text), blocks, strict=True):
                entries = [
                    (block.get(f), f, (1.0 + math.log(c)) * (idf[block[f]] if f in block else unseen))
                    for f, c in counts.items()
                ]
                norm = math.sqrt(sum(v * v for _, _, v in entries)) or 1.0
                for col, name, value in entries:
                    if col is None:
                        extra.append((name, weight * value / norm))
                    else:
                        rows.append(row)
                        cols.append(base + col)
                        values.append(weight * value / norm)
            unknown.append(extra)
        shape = (len(texts), offset + len(self.chars))
        return sparse.csr_matrix((values, (rows, cols)), shape=shape, dtype=np.float32), unknown

    def __post_init__(self) -> None:
        # Python floats for the per-feature loops, and the fixed lexical directions of the
        # vocabulary as one matrix (unknown features get theirs one by one).
        self._word_idf = self.word_idf.tolist()
        self._char_idf = self.char_idf.tolist()
        self._unseen_word = max(self._word_idf, default=1.0)
        self._unseen_char = max(self._char_idf, default=1.0)
        self._directions: np.ndarray | None = None

    @property
    def directions(self) -> np.ndarray:
        if self._directions is None:
            names = list(self.words) + list(self.chars)
            self._directions = (
                np.stack([_direction(f) for f in names]) if names else np.zeros((0, LEXICAL_DIMS), np.float32)
            )
        return self._directions

    def tfidf(self, texts: list[str]) -> sparse.csr_matrix:
        """The texts' normalised TF-IDF rows over both blocks (unknown features dropped)."""
        return self._weighted(texts)[0]

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        matrix, unknown = self._weighted(texts)
        latent = _normalise_rows(np.asarray(matrix @ self.components.T))
        lexical = np.asarray(matrix @ self.directions, dtype=np.float32)
        for row, extra in enumerate(unknown):
            for name, value in extra:
                lexical[row] += value * _direction(name)
        lexical = _normalise_rows(lexical)
        return np.hstack([np.sqrt(LATENT_SHARE) * latent, np.sqrt(1 - LATENT_SHARE) * lexical]).astype(
            np.float32
        )

    def dump(self) -> bytes:
        """The state as stored in the database (``np.savez``: arrays and strings, no pickle)."""
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            words=np.array(list(self.words), dtype=np.str_),
            chars=np.array(list(self.chars), dtype=np.str_),
            word_idf=self.word_idf,
            char_idf=self.char_idf,
            components=self.components,
            seed=np.array([self.seed]),
        )
        return buffer.getvalue()

    @classmethod
    def load(cls, state: bytes) -> LsaModel:
        data = np.load(io.BytesIO(state), allow_pickle=False)
        return cls(
            words={w: i for i, w in enumerate(data["words"].tolist())},
            chars={c: i for i, c in enumerate(data["chars"].tolist())},
            word_idf=data["word_idf"],
            char_idf=data["char_idf"],
            components=data["components"],
            seed=int(data["seed"][0]),
        )


@lru_cache(maxsize=200_000)
def _direction(feature: str) -> np.ndarray:
    """A feature's fixed pseudo-random direction (the same in every process: a CRC of its text)."""
    rng = np.random.default_rng(zlib.crc32(feature.encode()))
    return rng.standard_normal(LEXICAL_DIMS).astype(np.float32) / np.sqrt(LEXICAL_DIMS)


def _vocabulary(counted: list[Counter]) -> tuple[dict[str, int], np.ndarray]:
    frequency: Counter = Counter()
    for counts in counted:
        frequency.update(counts.keys())
    kept = sorted(f for f, n in frequency.items() if n >= MIN_DOCUMENT_FREQUENCY)
    total = len(counted)
    idf = np.array([np.log((1 + total) / (1 + frequency[f])) + 1 for f in kept], dtype=np.float32)
    return {f: i for i, f in enumerate(kept)}, idf


def dims_for(documents: int, features_: int) -> int:
    """How many components: a third of the documents for a small organization (fewer
    dimensions than documents is what merges words used alike), ``MAX_DIMS`` at most."""
    return max(1, min(MAX_DIMS, documents // 3, features_ - 1))


def _top_components(matrix: sparse.csr_matrix, k: int, seed: int, power: int = 4) -> np.ndarray:
    """The first ``k`` right singular vectors, by randomized SVD (Halko, Martinsson and Tropp:
    a random range, sharpened by ``power`` iterations, then the SVD of its small projection):
    seconds where ARPACK took tens at tens of thousands of documents."""
    rng = np.random.default_rng(seed)
    width = min(k + 10, min(matrix.shape))
    q, _ = np.linalg.qr(matrix @ rng.standard_normal((matrix.shape[1], width)).astype(np.float32))
    for _ in range(power):
        # Re-orthonormalised on the documents' side only (the short one at scale).
        q, _ = np.linalg.qr(matrix @ np.asarray(matrix.T @ q))
    _, _, vt = np.linalg.svd(np.asarray((matrix.T @ q).T), full_matrices=False)
    return vt[:k]


def fit(texts: list[str], seed: int = 0) -> LsaModel:
    """Fit the built-in encoder on an organization's texts (a sample of ``FIT_SAMPLE`` at most)."""
    if len(texts) > FIT_SAMPLE:
        picked = np.random.default_rng(seed).choice(len(texts), FIT_SAMPLE, replace=False)
        texts = [texts[i] for i in sorted(picked)]
    counted = [features(text) for text in texts]
    words_, word_idf = _vocabulary([c[0] for c in counted])
    chars, char_idf = _vocabulary([c[1] for c in counted])
    model = LsaModel(words_, chars, word_idf, char_idf, np.zeros((0, 0), dtype=np.float32), seed)
    n_features = len(words_) + len(chars)
    if n_features < 2 or not texts:
        model.components = np.zeros((1, max(n_features, 1)), dtype=np.float32)
        return model
    matrix = model.tfidf(texts)
    k = dims_for(len(texts), min(n_features, len(texts)) + 1)
    # One BLAS thread: its QR steps ran several times slower with OpenBLAS's threads
    # contending for a busy 2-core machine than on one.
    with threadpool_limits(1):
        vt = _top_components(matrix, k, seed)
    model.components = np.ascontiguousarray(vt, dtype=np.float32)
    return model


class OnnxEncoder:
    """A sentence-embedding model in ONNX format with its ``tokenizers`` tokenizer."""

    MAX_TOKENS = 256

    def __init__(self, directory: str | Path):
        import onnxruntime
        from tokenizers import Tokenizer

        directory = Path(directory)
        self.name = f"onnx:{directory.name}"
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.MAX_TOKENS)
        self.tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dims = int(self.encode(["x"]).shape[1])

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dims", 0)), dtype=np.float32)
        batch = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in batch], dtype=np.int64)
        mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        output = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        if output.ndim == 3:
            weights = mask[:, :, None].astype(np.float32)
            output = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return _normalise_rows(np.asarray(output, dtype=np.float32))

    def dump(self) -> bytes:
        return b""  # nothing learnt per organization


_onnx_cache: dict[str, OnnxEncoder] = {}


def onnx_encoder(directory: str) -> OnnxEncoder:
    """The operator's model, loaded once per process."""
    if directory not in _onnx_cache:
        _onnx_cache[directory] = OnnxEncoder(directory)
    return _onnx_cache[directory]
