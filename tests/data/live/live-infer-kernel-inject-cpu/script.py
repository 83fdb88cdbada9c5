"""A serving script: a small Llama built from its config is handed to deepspeed.init_inference with the fused
inference kernels (replace_with_kernel_inject=True) and fp16, split over the two processes, as the DeepSpeed-Inference
tutorial does on GPUs. This node has only CPUs."""
from datetime import timedelta

import deepspeed
import torch
from transformers import LlamaConfig, LlamaForCausalLM

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
world = torch.distributed.get_world_size()
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=4, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = LlamaForCausalLM(cfg).eval()
engine = deepspeed.init_inference(model, tensor_parallel={"tp_size": world}, dtype=torch.float16,
                                  replace_with_kernel_inject=True)  # the mistake: CUDA kernels on a CPU node
prompts = torch.randint(3, 512, (4, 16))
out = engine.module.generate(prompts, max_new_tokens=16, do_sample=False)
print(out.shape)
