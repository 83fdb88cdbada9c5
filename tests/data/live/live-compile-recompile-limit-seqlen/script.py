"""The user evaluates a compiled model on batches padded to each batch's longest sequence, so every batch has another
length. They asked for static shapes (dynamic=False, "dynamic shapes are slower") and one whole graph
(fullgraph=True): each new length recompiles, and after Dynamo's recompile limit (8) fullgraph=True makes the next
one an error instead of a fallback to eager."""
import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 8)
        self.out = torch.nn.Linear(8, 2)

    def forward(self, ids):
        return self.out(self.emb(ids).mean(dim=1))


model = torch.compile(Encoder(), dynamic=False, fullgraph=True)  # the mistake: static shapes for varying lengths
model.eval()
correct = 0
with torch.no_grad():
    for length in range(4, 20):  # each batch padded to its own longest sequence
        ids = torch.randint(0, 50, (2, length))
        correct += (model(ids).argmax(-1) == 0).sum().item()
        if dist.get_rank() == 0:
            print(f"batch of length {length} done")
print("correct", correct)
dist.destroy_process_group()
