"""The user adds a second version of their config (TinyMixerV2Config, with a dropout field) and registers the model
class for it, but the model class still declares config_class = TinyMixerConfig (the first version)."""
import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel


class TinyMixerConfig(PretrainedConfig):
    model_type = "tiny_mixer"

    def __init__(self, width=64, depth=2, vocab_size=1000, **kw):
        self.width, self.depth, self.vocab_size = width, depth, vocab_size
        super().__init__(**kw)


class TinyMixerV2Config(TinyMixerConfig):
    model_type = "tiny_mixer_v2"

    def __init__(self, dropout=0.1, **kw):
        self.dropout = dropout
        super().__init__(**kw)


class TinyMixerModel(PreTrainedModel):
    config_class = TinyMixerConfig
    base_model_prefix = "mixer"

    def __init__(self, config):
        super().__init__(config)
        self.emb = torch.nn.Embedding(config.vocab_size, config.width)
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(config.width, config.width) for _ in range(config.depth))
        self.drop = torch.nn.Dropout(getattr(config, "dropout", 0.0))
        self.post_init()

    def forward(self, input_ids):
        h = self.emb(input_ids)
        for b in self.blocks:
            h = h + self.drop(torch.relu(b(h)))
        return h


dist.init_process_group("gloo")
AutoConfig.register("tiny_mixer_v2", TinyMixerV2Config)
AutoModel.register(TinyMixerV2Config, TinyMixerModel)
model = AutoModel.from_config(TinyMixerV2Config(dropout=0.2))
print(model(torch.randint(0, 1000, (2, 8))).shape)
dist.destroy_process_group()
