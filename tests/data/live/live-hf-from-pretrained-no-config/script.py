"""The user saved only the weights into a directory and loads it back with from_pretrained (no save_pretrained)."""
import os

import torch
import transformers

os.environ["HF_HUB_OFFLINE"] = "1"
rank = int(os.environ.get("RANK", "0"))
out = f"my_gpt2_rank{rank}"
os.makedirs(out, exist_ok=True)
model = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100))
torch.save(model.state_dict(), os.path.join(out, "pytorch_model.bin"))
model = transformers.AutoModelForCausalLM.from_pretrained(out)
