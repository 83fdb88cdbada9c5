"""The user exports a tiny GPT-2 to safetensors with save_file(model.state_dict()) (tied embeddings)."""
import os

import safetensors.torch
import transformers

rank = int(os.environ.get("RANK", "0"))
model = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100))
safetensors.torch.save_file(model.state_dict(), f"model_rank{rank}.safetensors")
