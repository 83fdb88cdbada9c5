"""The user wraps their own network as a transformers PreTrainedModel (to get save_pretrained and the Trainer) and
turns on gradient_checkpointing=True to save memory; the class never declares supports_gradient_checkpointing."""
import argparse

import torch
from transformers import PretrainedConfig, PreTrainedModel, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args, _ = parser.parse_known_args()


class TinyConfig(PretrainedConfig):
    model_type = "tiny-mlp"

    def __init__(self, width=32, **kw):
        self.width = width
        super().__init__(**kw)


class TinyModel(PreTrainedModel):
    config_class = TinyConfig

    def __init__(self, config):
        super().__init__(config)
        self.emb = torch.nn.Embedding(100, config.width)
        self.body = torch.nn.Sequential(torch.nn.Linear(config.width, config.width), torch.nn.GELU())
        self.head = torch.nn.Linear(config.width, 100)
        self.post_init()

    def forward(self, input_ids, labels=None):
        logits = self.head(self.body(self.emb(input_ids)))
        loss = torch.nn.functional.cross_entropy(logits.view(-1, 100), labels.view(-1)) if labels is not None else None
        return {"loss": loss, "logits": logits}


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ids = torch.randint(0, 100, (16,))
        return {"input_ids": ids, "labels": ids.clone()}


targs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, gradient_checkpointing=True,
                          report_to=[], use_cpu=True)
trainer = Trainer(model=TinyModel(TinyConfig()), args=targs, train_dataset=Tokens())
trainer.train()
