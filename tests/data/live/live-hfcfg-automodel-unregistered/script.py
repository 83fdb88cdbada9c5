"""The user's own architecture (model_type "tiny_lm") is saved with save_pretrained on rank 0, then every rank reloads
it with AutoModel.from_pretrained, without AutoConfig.register / AutoModel.register (nor auto_map with
trust_remote_code), so transformers does not know the model type."""
import torch
import torch.distributed as dist
from transformers import AutoModel, PretrainedConfig, PreTrainedModel


class TinyLMConfig(PretrainedConfig):
    model_type = "tiny_lm"

    def __init__(self, width=64, vocab_size=1000, **kw):
        self.width, self.vocab_size = width, vocab_size
        super().__init__(**kw)


class TinyLM(PreTrainedModel):
    config_class = TinyLMConfig
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
    TinyLM(TinyLMConfig()).save_pretrained("tiny_ckpt")
dist.barrier()
model = AutoModel.from_pretrained("./tiny_ckpt")
print(model(torch.randint(0, 1000, (2, 8))).shape)
dist.destroy_process_group()
