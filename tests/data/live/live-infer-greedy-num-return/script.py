"""An evaluation script asks for three candidate completions per prompt (pass@3) from a DeepSpeed inference engine,
with num_return_sequences=3, and leaves the decoding at its default (greedy, no sampling, no beams)."""
from datetime import timedelta

import deepspeed
import torch
from transformers import LlamaConfig, LlamaForCausalLM

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
rank = torch.distributed.get_rank()
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
engine = deepspeed.init_inference(LlamaForCausalLM(cfg).eval(), dtype=torch.float32)
problems = torch.randint(3, 512, (4, 24))[rank::2]
candidates = engine.module.generate(problems, attention_mask=torch.ones_like(problems), max_new_tokens=24,
                                    num_return_sequences=3)  # the mistake: greedy decoding gives one sequence
print(candidates.view(problems.shape[0], 3, -1).shape)
