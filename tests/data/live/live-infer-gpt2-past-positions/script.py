"""Story continuation with a small GPT-2 (built from its config, n_positions=64, learned position embeddings) served
through deepspeed.init_inference: the prompts are 48 tokens and the script asks for 40 new tokens, past the model's
64 positions."""
from datetime import timedelta

import deepspeed
import torch
from transformers import GPT2Config, GPT2LMHeadModel

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
rank = torch.distributed.get_rank()
torch.manual_seed(0)
cfg = GPT2Config(vocab_size=512, n_positions=64, n_embd=64, n_layer=2, n_head=4, bos_token_id=1, eos_token_id=2,
                 pad_token_id=0)
engine = deepspeed.init_inference(GPT2LMHeadModel(cfg).eval(), dtype=torch.float32)
stories = torch.randint(3, 512, (4, 48))[rank::2]
out = engine.module.generate(stories, attention_mask=torch.ones_like(stories), max_new_tokens=40,
                             min_new_tokens=40)  # the mistake: 48 + 40 positions on a 64-position model
print(out.shape)
