"""Tokenizers: built-in byte-level (default, nothing to download) or a local HF `tokenizer.json`.

Both expose the same small surface: `encode(text) -> list[int]`, `decode(ids) -> str`,
`vocab_size`, `eos_id` and `describe()` (what meta.json records, so the trainer can rebuild it).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol

from dscluster.errors import DataError
from dscluster.i18n import tr


class Tokenizer(Protocol):
    vocab_size: int
    eos_id: int

    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: list[int]) -> str: ...
    def describe(self) -> dict: ...


class ByteTokenizer:
    """UTF-8 bytes 0..255 plus one end-of-document id (256). Lossless for any text."""

    vocab_size = 257
    eos_id = 256

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: list[int]) -> str:
        # Ids >= 256 (eos, or padded vocabulary a model may sample) are not text.
        return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")

    def describe(self) -> dict:
        return {"type": "byte", "vocab_size": self.vocab_size, "eos_id": self.eos_id}


class HFTokenizer:
    """A local `tokenizer.json` through the `tokenizers` package (extra `hf`)."""

    def __init__(self, path: str | Path):
        path = Path(path)
        try:
            from tokenizers import Tokenizer as _Tok  # noqa: PLC0415 - optional extra
        except ImportError as exc:
            raise DataError(tr("--tokenizer {path} needs the 'tokenizers' package", path=path),
                            tr("pip install 'dscluster[hf]' (or omit --tokenizer to use byte-level tokens)"),
                            setting="tokenizer") from exc
        if not path.is_file():
            raise DataError(tr("tokenizer file {path} does not exist", path=path),
                            tr("pass the path of a tokenizer.json file, or omit --tokenizer"), setting="tokenizer")
        try:
            self._tok = _Tok.from_file(str(path))
        except Exception as exc:  # noqa: BLE001 - tokenizers raises plain Exception on bad JSON
            raise DataError(tr("tokenizer file {path} does not parse: {err}", path=path, err=str(exc).splitlines()[0][:200]),
                            tr("pass a Hugging Face tokenizer.json (the fast-tokenizer file), or omit --tokenizer"),
                            setting="tokenizer") from exc
        self.path = path.resolve()
        self.vocab_size = int(self._tok.get_vocab_size(with_added_tokens=True))
        eos = None
        for name in ("<|endoftext|>", "</s>", "<eos>", "<|end_of_text|>", "[SEP]"):
            eos = self._tok.token_to_id(name)
            if eos is not None:
                break
        # No end-of-document token: reserve one id past the vocabulary.
        self.eos_id = int(eos) if eos is not None else self.vocab_size
        if eos is None:
            self.vocab_size += 1
        self.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode([i for i in ids if i != self.eos_id])

    def describe(self) -> dict:
        return {"type": "hf", "path": str(self.path), "sha256": self.sha256,
                "vocab_size": self.vocab_size, "eos_id": self.eos_id}


def load_tokenizer(spec: str | Path | None) -> Tokenizer:
    """None or "byte" -> ByteTokenizer; anything else is the path of a tokenizer.json."""
    if spec is None or str(spec) == "byte":
        return ByteTokenizer()
    return HFTokenizer(spec)


def tokenizer_from_meta(desc: dict) -> Tokenizer:
    """Rebuild the tokenizer a data directory was prepared with (meta.json's "tokenizer")."""
    if desc.get("type") == "byte":
        return ByteTokenizer()
    if desc.get("type") == "hf":
        return HFTokenizer(desc["path"])
    raise DataError(tr("meta.json names an unknown tokenizer type {t!r}", t=desc.get("type")),
                    tr("prepare the data again with: dscluster data prepare SRC... --out DIR"), setting="data")
