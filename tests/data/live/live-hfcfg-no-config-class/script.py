"""The user's own PreTrainedModel subclass never sets config_class; rank 0 saves an initial checkpoint with
save_pretrained and every rank reloads it with TinyLM.from_pretrained(dir), which needs config_class to read config.json."""
import os

import torch
import torch.distributed as dist
from transformers import PretrainedConfig, PreTrainedModel


class TinyLMConfig(PretrainedConfig):
    model_type = "tiny_lm"

    def __init__(self, width=64, vocab_size=1000, **kw):
        self.width, self.vocab_size = width, vocab_size
        super().__init__(**kw)


class TinyLM(PreTrainedModel):
    base_model_prefix = "tiny"

    def __init__(self, config):
        super().__init__(config)
        self.emb = torch.nn.Embedding(config.vocab_size, config.width)
        self.out = torch.nn.Linear(config.width, config.vocab_size, bias=False)
        self.post_init()

    def forward(self, input_ids):
        return self.out(self.emb(input_ids))


dist.init_process_group("gloo")
if dist.get_rank() == 0:
    TinyLM(TinyLMConfig()).save_pretrained("init_ckpt")
dist.barrier()
model = TinyLM.from_pretrained(os.path.abspath("init_ckpt"))
print(sum(p.numel() for p in model.parameters()))
dist.destroy_process_group()
