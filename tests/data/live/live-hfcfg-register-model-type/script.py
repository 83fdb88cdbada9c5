"""The user's own architecture is registered with the Auto classes so AutoModel.from_config can build it; the
config class says model_type = "tiny_mixer" but AutoConfig.register is called with "tiny-mixer"."""
import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel


class TinyMixerConfig(PretrainedConfig):
    model_type = "tiny_mixer"

    def __init__(self, width=64, depth=2, vocab_size=1000, **kw):
        self.width, self.depth, self.vocab_size = width, depth, vocab_size
        super().__init__(**kw)


class TinyMixerModel(PreTrainedModel):
    config_class = TinyMixerConfig
    base_model_prefix = "mixer"

    def __init__(self, config):
        super().__init__(config)
        self.emb = torch.nn.Embedding(config.vocab_size, config.width)
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(config.width, config.width) for _ in range(config.depth))
        self.post_init()

    def forward(self, input_ids):
        h = self.emb(input_ids)
        for b in self.blocks:
            h = h + torch.relu(b(h))
        return h


dist.init_process_group("gloo")
AutoConfig.register("tiny-mixer", TinyMixerConfig)
AutoModel.register(TinyMixerConfig, TinyMixerModel)
model = AutoModel.from_config(AutoConfig.for_model("tiny_mixer"))
print(model(torch.randint(0, 1000, (2, 8))).shape)
dist.destroy_process_group()
