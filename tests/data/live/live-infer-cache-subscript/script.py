"""A hand-written incremental decoding loop (greedy, with the KV cache) after deepspeed.init_inference, ported from
transformers 4.x code: it reads the cached length as past_key_values[0][0].shape[2] to build the next position id."""
from datetime import timedelta

import deepspeed
import torch
from transformers import LlamaConfig, LlamaForCausalLM

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
engine = deepspeed.init_inference(LlamaForCausalLM(cfg).eval(), dtype=torch.float32)
model = engine.module
ids = torch.randint(3, 512, (2, 12))
with torch.no_grad():
    out = model(input_ids=ids, use_cache=True)
    past = out.past_key_values
    tokens = [out.logits[:, -1].argmax(-1, keepdim=True)]
    for _ in range(15):
        past_len = past[0][0].shape[2]  # the mistake: a 4.x tuple-of-tuples idiom on a transformers 5 Cache
        pos = torch.full((ids.shape[0], 1), past_len)
        out = model(input_ids=tokens[-1], past_key_values=past, position_ids=pos, use_cache=True)
        past = out.past_key_values
        tokens.append(out.logits[:, -1].argmax(-1, keepdim=True))
print(torch.cat(tokens, 1).tolist())
