"""The user's own PreTrainedModel keeps its token table under a custom attribute name (self.tok) and adds two special
tokens with resize_token_embeddings, without overriding get_input_embeddings / set_input_embeddings."""
import torch
import torch.distributed as dist
from transformers import PretrainedConfig, PreTrainedModel


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
        self.tok = torch.nn.Embedding(config.vocab_size, config.width)
        self.mix = torch.nn.Linear(config.width, config.width)
        self.out = torch.nn.Linear(config.width, config.vocab_size, bias=False)
        self.post_init()

    def forward(self, input_ids):
        return self.out(torch.tanh(self.mix(self.tok(input_ids))))


dist.init_process_group("gloo")
model = TinyLM(TinyLMConfig())
SPECIAL = ["<|user|>", "<|assistant|>"]
model.resize_token_embeddings(model.config.vocab_size + len(SPECIAL))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 1002, (4, 16))
torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten()).backward()
opt.step()
dist.destroy_process_group()
