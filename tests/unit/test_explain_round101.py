"""Round 101's rules (issue 45), from threads about model and dataset downloads when training on several GPUs and
nodes: the Hugging Face Hub's 429 (every rank asking the Hub for the same files at start) read as a rate limit
(hub-rate-limited) rather than a generic Python error or a Hub out of reach, and a checkpoint's link that every node's
local rank 0 creates in a shared directory (checkpoint-saved-by-every-node): a second wording of each, in another
version's or caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("hub-rate-limited", "checkpoint-saved-by-every-node")


@pytest.mark.parametrize("text,expected", [
    # transformers (utils/hub.py cached_file) wrapping requests' HTTPError in its "We couldn't connect" OSError, as
    # huggingface/transformers#26011 shows it: the 429 in the traceback, not an unreachable Hub
    ("requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
     "https://huggingface.co/org/model/resolve/main/config.json\n"
     "\n"
     "During handling of the above exception, another exception occurred:\n"
     "\n"
     "Traceback (most recent call last):\n"
     "  File \"train.py\", line 40, in <module>\n"
     "    tokenizer = AutoTokenizer.from_pretrained(args.model)\n"
     "OSError: We couldn't connect to 'https://huggingface.co/' to load this model and it looks like org/model is not "
     "the path to a directory conaining a config.json file.\n", "hub-rate-limited"),
    # transformers 4.2x's own wording for the same (huggingface/transformers#21129)
    ("OSError: There was a specific connection error when trying to load flax-community/roberta-base-thai:\n"
     "429 Client Error: Too Many Requests for url: "
     "https://huggingface.co/flax-community/roberta-base-thai/resolve/main/config.json\n", "hub-rate-limited"),
    # huggingface_hub today (utils/_http.py hf_raise_for_status) without rate-limit headers
    ("huggingface_hub.errors.HfHubHTTPError: \n\n429 Too Many Requests for url: "
     "https://huggingface.co/api/datasets/org/data/paths-info/0123abcd.\n", "hub-rate-limited"),
    # the Rust hf-hub client (reqwest) of text-embeddings-inference (huggingface/Google-Cloud-Containers#145)
    ("Download failed: request error: HTTP status client error (429 Too Many Requests) for url "
     "(https://huggingface.co/org/model/resolve/0123abcd/1_Pooling/config.json)\n", "hub-rate-limited"),
    # urllib3's retries giving up on the Hub's 429s
    ("requests.exceptions.RetryError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with "
     "url: /api/models/org/model (Caused by ResponseError('too many 429 error responses'))\n", "hub-rate-limited"),
    # os.link's wording of the same two-filename error for a checkpoint saved by two nodes
    ("FileExistsError: [Errno 17] File exists: '/shared/out/ckpt_step_2000.tmp' -> '/shared/out/ckpt_step_2000.pt'\n",
     "checkpoint-saved-by-every-node"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # another server's 429: GitHub's API, a Python index, sbert.net's old model store (huggingface/sentence-transformers#759)
    ("requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
     "https://api.github.com/repos/org/repo/releases/latest\n", "hub-rate-limited"),
    ("ERROR: HTTP error 429 while getting https://pypi.org/simple/torch/\n", "hub-rate-limited"),
    ("requests.exceptions.httperror 429 client error too many requests for url "
     "http://sbert.net/models/bert-base-nli-mean-tokens.zip\n", "hub-rate-limited"),
    # huggingface_hub's backoff on a server error and its plain retry: not the rate limit
    ("HTTP Error 503 thrown while requesting HEAD https://huggingface.co/org/model/resolve/main/config.json\n"
     "Retrying in 1s [Retry 1/5].\n", "hub-rate-limited"),
    # the Hub out of reach stays hub-unreachable
    ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files "
     "and it looks like bert-base-uncased is not the path to a directory containing a file named config.json.\n",
     "hub-rate-limited"),
    # parallel hf_hub_download racing on the Hub cache's own links (huggingface/huggingface_hub#1133), whatever the file
    ("FileExistsError: [Errno 17] File exists: '../../blobs/0a1b2c' -> "
     "'/root/.cache/huggingface/hub/models--org--m/snapshots/3d4e/checkpoints/model.ckpt'\n",
     "checkpoint-saved-by-every-node"),
    # a directory that exists (one filename), and a link that is not a checkpoint's
    ("FileExistsError: [Errno 17] File exists: 'output/checkpoint-500'\n", "checkpoint-saved-by-every-node"),
    ("FileExistsError: [Errno 17] File exists: 'data/train.jsonl' -> 'cache/train.jsonl'\n",
     "checkpoint-saved-by-every-node"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_unreachable_hub_is_still_unreachable():
    assert sig("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
               "cached files and it looks like bert-base-uncased is not the path to a directory containing a file "
               "named config.json.\n") == "hub-unreachable"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
