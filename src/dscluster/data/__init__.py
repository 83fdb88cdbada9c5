"""Token data: tokenizers, `data prepare` (text files -> memory-mapped token shards), the stdlib corpus.

Runs inside every rank too (the trainer reads shards through `shards.open_dataset`), so it imports
nothing above `dscluster.errors` / `fsutil` / `paths`.
"""
