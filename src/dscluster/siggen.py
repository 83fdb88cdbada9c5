"""Failure signatures of text generation from a training or serving script, from round 217 of issue 45 (live: broken
users' scripts run for real on transformers 5.23 and DeepSpeed 0.19.8, CPU, gloo): generate()'s own checks of its
arguments (sampling at temperature 0, a max_length no longer than the prompt, num_return_sequences that the decoding
cannot give, a dict of inputs given as its first argument), the KV cache of transformers 5 (a Cache object read as the
legacy tuple of tuples, one cache kept for every batch), a generation past a model's learned positions and generate()
on a ZeRO-3 model that the ranks do not run together (on rank 0 only, or without synced_gpus). Each pattern is the
wording of the component that prints it (transformers' generation/utils.py, configuration_utils.py, logits_process.py
and cache_utils.py, DeepSpeed's ZeRO-3 parameter fetch), never one log's. sigrounds.py places this table with the
other round tables, before the exception messages' (siglibs' embedding-index reads every 'index out of range in
self')."""

from __future__ import annotations

from dscluster.sigtypes import CARET_LINE, Signature, then
from dscluster.sigtypes import sig as _sig

GEN_SIGNATURES: tuple[Signature, ...] = (
    # transformers/generation/logits_process.py, TemperatureLogitsWarper.__init__: "`temperature` (=0.0) has to be a
    # strictly positive float, otherwise your next token scores will be invalid. If you're looking for greedy decoding
    # strategies, set `do_sample=False`." (only built when do_sample=True).
    _sig("gen-sampling-temperature-zero",
         r"`temperature` \(=-?[\d.e-]+\) has to be a strictly positive float",
         "generate() was asked to sample (do_sample=True) with a temperature of 0 (or below): sampling divides the "
         "logits by the temperature, so transformers refuses one that is not strictly positive. A temperature of 0 "
         "is often meant as 'greedy, reproducible' (as in OpenAI-style APIs), which in transformers is do_sample=False.",
         "For greedy (deterministic) decoding pass do_sample=False and leave temperature out; to sample, give a "
         "temperature above 0 (e.g. 0.7; 1.0 leaves the logits unchanged) and seed the generator (torch.manual_seed) "
         "for reproducible samples. A restart fails the same way.", retry=False),
    # transformers/generation/utils.py, _validate_generated_length: "Input length of input_ids is 48, but `max_length`
    # is set to 32. This can lead to unexpected behavior. You should consider increasing `max_length` or, better yet,
    # setting `max_new_tokens`." (a ValueError in 5.x, a warning in older releases).
    _sig("gen-max-length-under-prompt",
         r"Input length of (?:input_ids|\w+) is \d+, but `max_length` is set to \d+",
         "generate()'s max_length counts the prompt's tokens too (the whole sequence, prompt plus completion), and the "
         "prompts are already as long as or longer than it: max_length was set meaning the completion's length.",
         "Pass max_new_tokens=N for N generated tokens (whatever the prompt's length) and drop max_length, or raise "
         "max_length above the longest prompt plus the tokens wanted (also in the model's generation_config). A "
         "restart fails the same way.", retry=False),
    # transformers/generation/configuration_utils.py, GenerationConfig.validate: "Greedy methods (do_sample != True)
    # without beam search do not support `num_return_sequences` different than 1 (got 3)." and "`num_return_sequences`
    # (3) has to be smaller or equal to `num_beams` (2)."
    _sig("gen-num-return-sequences",
         r"Greedy methods (?:\(do_sample != True\) )?without beam search do not support `num_return_sequences`|"
         r"`num_return_sequences` \(\d+\) has to be smaller or equal to `num_beams` \(\d+\)",
         "generate() was asked for several sequences per prompt (num_return_sequences > 1) with a decoding that "
         "cannot give them: greedy search (do_sample=False, num_beams=1, the default) yields one sequence per prompt, "
         "and beam search at most num_beams.",
         "For different candidates per prompt sample them (do_sample=True, with temperature / top_p), or use beam "
         "search with num_beams >= num_return_sequences (the n best beams); with plain greedy decoding leave "
         "num_return_sequences at 1. A restart fails the same way.", retry=False),
    # transformers/generation/utils.py, generate(): `batch_size = inputs_tensor.shape[0]` on a first argument that is
    # the collate's dict (or a tokenizer's BatchEncoding) instead of the input_ids tensor: "AttributeError: 'dict'
    # object has no attribute 'shape'".
    _sig("gen-inputs-dict-positional",
         r"batch_size = inputs_tensor\.shape\[0\]\n" + CARET_LINE +
         r"[^\n]*?AttributeError: '(?:dict|BatchEncoding|list|tuple)' object has no attribute 'shape'",
         "The whole batch (a dict of input_ids and attention_mask, or a tokenizer's BatchEncoding) was passed to "
         "generate() as its first argument, which takes the input_ids tensor itself: generate(batch) reads the dict "
         "as the prompt tensor.",
         "Unpack the batch into keyword arguments: model.generate(**batch, max_new_tokens=...) (or "
         "generate(input_ids=batch[\"input_ids\"], attention_mask=batch[\"attention_mask\"])); drop keys generate "
         "does not take (labels) first. A restart fails the same way.", retry=False),
    # transformers 5 keeps the KV cache as a Cache object (DynamicCache, StaticCache, EncoderDecoderCache...): code
    # written for 4.x's tuple of (key, value) tuples per layer fails on it ("'DynamicCache' object is not
    # subscriptable" for past_key_values[0][0]), and a tuple handed back as past_key_values fails in the model's
    # forward ("'tuple' object has no attribute 'get_seq_length'").
    _sig("hf-cache-legacy-format",
         r"'(?:Dynamic|Static|Hybrid|Sliding\w*|Offloaded\w*|Quantized\w*|EncoderDecoder|Mamba\w*)Cache' object is not "
         r"subscriptable|'tuple' object has no attribute '(?:get_seq_length|get_mask_sizes|update|layers)'",
         "The script treats the model's past_key_values as transformers 4.x's legacy format, a tuple with one (key, "
         "value) pair per layer (past[0][0].shape[2] for the cached length, tuples rebuilt or passed back): in "
         "transformers 5 the KV cache is a Cache object (DynamicCache...), which cannot be indexed that way, and "
         "models no longer take the tuple format.",
         "Use the Cache API: past.get_seq_length() for the cached length, past.layers[i].keys / .values for a "
         "layer's tensors, past.crop(n) to cut it, past.batch_select_indices / reorder_cache to reorder; pass the "
         "Cache object itself back as past_key_values (or let generate() handle the cache); pin transformers<5 for "
         "code that needs the tuples. A restart fails the same way.", retry=False),
    # A Cache already holding tokens, given to generate() again: transformers/cache_utils.py, DynamicLayer.update's
    # `self.keys = torch.cat([self.keys, key_states], dim=-2)` (the cached keys of an earlier call, another batch
    # size, concatenated with this step's), or generate()'s prefill (generation/utils.py's _prefill) handed the
    # prompt less the tokens the cache holds, none left: an attention's view of 0 tokens, "cannot reshape tensor of 0
    # elements into shape [2, 0, -1, 16]".
    _sig("gen-cache-reused",
         r"self\.keys = torch\.cat\(\[self\.keys, key_states\], dim=-2\)\n" + CARET_LINE +
         r"[^\n]*?RuntimeError: Sizes of tensors must match except in dimension 2|" +
         then(r'generation/utils\.py", line \d+, in _prefill',
              r"cannot reshape tensor of 0 elements into shape \[\d+, 0, ", gap=r"[\s\S]"),
         "One KV cache object (a DynamicCache made once) was passed to several generate() calls or forwards of "
         "different prompts: a Cache keeps every token it has seen, so the next batch's keys are appended to the "
         "previous batch's: a batch of another size no longer fits it, and generate() takes the tokens the cache "
         "holds as already read, so a prompt no longer than them leaves nothing to read (the same size silently "
         "attends to the old prompts).",
         "Let generate() make its own cache (pass no past_key_values), or create a new DynamicCache() for every "
         "generate() call / every new sequence; reuse a cache only to continue the same sequences. A restart fails "
         "the same way.", retry=False),
    # torch's embedding bound check ("IndexError: index out of range in self") at a model's learned position embedding
    # (GPT-2's self.wpe(position_ids), OPT's / BART's self.embed_positions(...), BERT-style self.position_embeddings)
    # inside generate()'s decoding loop (transformers/generation/utils.py's _sample, _beam_search...): the positions
    # ran past the table. (stopping_criteria.py's MaxLengthCriteria also warns "the current text generation call has
    # exceeded the model's predefined maximum length", lines before the error.) A token embedding's (wte) is not this.
    _sig("gen-past-max-positions",
         then(r'generation/utils\.py", line \d+, in \w+',
              then(r"(?:self\.wpe|self\.embed_positions|self\.position_embeddings)\(",
                   r"IndexError: index out of range in self", gap=r"[\s\S]"), gap=r"[\s\S]"),
         "generate() went on past the model's maximum length (max_position_embeddings / n_positions): the prompt's "
         "tokens plus max_new_tokens (or max_length) are more positions than a model with learned position embeddings "
         "(GPT-2, OPT, BERT-style) has, so the position embedding is looked up past its table.",
         "Keep the prompt length plus max_new_tokens at most the model's maximum (model.config.max_position_embeddings "
         "or n_positions): truncate the prompts from the left (tokenizer truncation_side='left', max_length), lower "
         "max_new_tokens, or use a model built for longer contexts. A restart fails the same way.", retry=False),
    # A rank's collective failure (gloo's "Timed out waiting 20000ms for recv|send operation", "Connection closed by
    # peer", NCCL's watchdog timeout) raised in ZeRO-3's parameter fetch (deepspeed/runtime/zero/
    # partitioned_param_coordinator.py, partition_parameters.py) inside transformers' generate() decoding loop: the
    # ranks did not run generate()'s forwards together.
    _sig("zero3-generate-unsynced",
         then(r'generation/utils\.py", line \d+, in \w+',
              then(r"deepspeed/runtime/zero/(?:partitioned_param_coordinator|partition_parameters)\.py",
                   r"Timed out waiting \d+ ?ms for (?:send|recv)|Connection (?:closed|reset) by peer|"
                   r"Watchdog caught collective operation timeout", gap=r"[\s\S]"), gap=r"[\s\S]"),
         "generate() ran on a model whose parameters ZeRO-3 partitions across the ranks: each forward gathers the "
         "layers' parameters from every rank (an all-gather), so every rank must run the same number of forwards "
         "together. Here they did not: generate() was called on some ranks only (inside `if rank == 0:`), or the "
         "ranks' decoding loops stopped after different numbers of tokens (other prompt lengths, an EOS reached "
         "earlier) without synced_gpus=True, and a rank waited in an all-gather that its peers never joined.",
         "Call generate() on every rank with synced_gpus=True (transformers turns it on by itself only where it knows "
         "of ZeRO-3: under the Trainer, or with an HfDeepSpeedConfig kept alive before the model is built) and keep "
         "or print the result on rank 0 only; or generate from a copy whose parameters are whole (gathered with "
         "deepspeed.zero.GatheredParameters on every rank, or a consolidated checkpoint). A restart fails the same "
         "way.", retry=False),
)
