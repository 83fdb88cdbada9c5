"""The user loads weights a colleague saved with a newer torch (its archive's version record is above what this torch
reads); here the colleague's file is imitated by rewriting the version record of a file saved with this torch."""
import os
import zipfile

import torch

rank = int(os.environ.get("RANK", "0"))
src, path = f"local_rank{rank}.pt", f"from_colleague_rank{rank}.pt"
torch.save(torch.nn.Linear(8, 2).state_dict(), src)
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zout:
    for item in zin.infolist():
        data = zin.read(item.filename)
        if item.filename.endswith("/version"):
            data = b"20\n"  # what a future torch writes
        zout.writestr(item, data)
model = torch.nn.Linear(8, 2)
model.load_state_dict(torch.load(path))
