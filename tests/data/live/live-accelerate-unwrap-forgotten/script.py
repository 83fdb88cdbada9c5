"""The user fine-tunes a (tiny) GPT-2 with Accelerate on 2 processes and saves it with model.save_pretrained(...) at the
end -- on the object prepare() returned, which is the DistributedDataParallel wrapper, not the model
(accelerator.unwrap_model(model) is what has save_pretrained)."""
import torch
import transformers
from accelerate import Accelerator

accelerator = Accelerator(cpu=True)
model = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 100, (16, 12))
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(ids), batch_size=4)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for (x,) in loader:
    loss = model(input_ids=x, labels=x).loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
accelerator.wait_for_everyone()
if accelerator.is_main_process:
    model.save_pretrained("out/gpt2-tiny")
