"""Failure signatures of building transformers models from configs and custom model classes, from round 194 of issue
45 (live: broken users' scripts run for real on transformers 5.23 and torch 2.13): the Auto classes given something
that is not a config, a config whose sizes or field types the model refuses, an attention implementation the node
cannot run, AutoConfig.register / AutoModel.register with names or classes that disagree, a PreTrainedModel subclass
without config_class or its embedding accessors, the user's own model type loaded through the Auto classes without
being registered (sigcheckpoint.py's, read with the lines before the error), and grouped-query attention whose key/value heads do not divide the query heads. Each pattern is the
wording of the component that prints it (transformers' models/auto/auto_factory.py and configuration_auto.py,
modeling_utils.py, the BERT-family and GPT-2 attention modules and LlamaConfig, integrations/sdpa_attention.py,
huggingface_hub's strict dataclasses), never one log's. sigrounds.py places this table just before the exception
messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

HFCONFIG_SIGNATURES: tuple[Signature, ...] = (
    # auto_factory.py _BaseAutoModelClass.from_config: "Unrecognized configuration class {config.__class__} for this
    # kind of AutoModel: {cls.__name__}." Only for a value that is no config at all (a dict from json.load or YAML, a
    # model name or path string, None): a real config class of another kind (a BertConfig for AutoModelForCausalLM in
    # an older release) stays the generic refusal's.
    _sig("hf-from-config-not-config", r"Unrecognized configuration class <class '(?:str|dict|NoneType|"
         r"(?:pathlib\.)?\w*Path|omegaconf\.\w+\.DictConfig)'> for this kind of AutoModel",
         "An Auto class's from_config was given something that is not a transformers config object: a plain dict "
         "(json.load or yaml of a config file), a model name or directory string, or None (the class in the "
         "message). from_config builds the model from a config instance; it does not read files or names.",
         "Make a config first: AutoConfig.for_model(**d) (or the model's own class, GPT2Config(**d)) for a dict, "
         "AutoConfig.from_pretrained(dir) for a directory with config.json, then AutoModel...from_config(config). A "
         "restart fails the same way.", retry=False),
    # The BERT family's self-attention (modeling_bert.py and its copies) and LlamaConfig.validate_architecture: "The
    # hidden size ({hidden_size}) is not a multiple of the number of attention heads ({num_attention_heads})"; GPT-2's
    # attention (modeling_gpt2.py): "`embed_dim` must be divisible by num_heads (got `embed_dim`: N and `num_heads`: M)".
    _sig("hf-heads-not-divisor", r"The hidden size \(\d+\) is not a multiple of the number of attention heads \(\d+\)|"
         r"`embed_dim` must be divisible by num_heads \(got `embed_dim`: \d+ and `num_heads`: \d+\)",
         "The model's config sets a hidden size that is not a multiple of its number of attention heads (the two "
         "numbers in the message): each head gets hidden_size / num_attention_heads dimensions. A small config built "
         "by hand that changes the hidden size (hidden_size, n_embd, d_model) and keeps the class's default number "
         "of heads (12 for BERT and GPT-2) does this.",
         "Choose the two together in the config: a hidden size that the head count divides (hidden_size=96 or 128 "
         "with 12 heads, or num_attention_heads=4 / n_head=4 for 100). A restart fails the same way.", retry=False),
    # modeling_utils.py _check_and_adjust_attn_impl's availability check (5.x): "FlashAttention{2,3,4} has been
    # toggled on, but it cannot be used due to the following error: the package for FlashAttention2 doesn't seem to be
    # installed." / "... FlashAttention2 is not available on CPU. ..."; 4.x: "... the package flash_attn seems to be
    # not installed."
    _sig("hf-flash-attn-unavailable", r"FlashAttention\d* has been toggled on, but it cannot be used due to the "
         r"following error: (?:the package (?:for FlashAttention\d*|flash_attn)\b|FlashAttention\d* is not available "
         r"on CPU)",
         "The model was built or loaded with attn_implementation=\"flash_attention_2\" (or _3/_4) where FlashAttention "
         "cannot run: the flash-attn package is not installed on the node, or the node has no CUDA GPU (FlashAttention "
         "is a CUDA kernel; a CPU-only node never runs it).",
         "On CPU nodes (or without flash-attn) pass attn_implementation=\"sdpa\" (or \"eager\"), or leave it out; "
         "on CUDA GPUs install flash-attn matching the torch and CUDA versions on every node (pip install flash-attn "
         "--no-build-isolation). A restart fails the same way.", retry=False),
    # auto_factory.py _LazyAutoMapping.register / AutoConfig.register's consistency checks: "The config you are passing
    # has a `model_type` attribute that is not consistent with the model type you passed (config has X and you passed
    # Y. Fix one of those so they match!" and "The model class you are passing has a `config_class` attribute that is
    # not consistent with the config class you passed (model has <class A> and you passed <class B>. ..."
    _sig("hf-auto-register-mismatch", r"The (?:config|model class) you are passing has a `(?:model_type|config_class)` "
         r"attribute that is not consistent with the (?:model type|config class) you passed",
         "AutoConfig.register or AutoModel.register was called with a name or class that disagrees with what the "
         "class itself declares: AutoConfig.register(name, ConfigClass) needs name == ConfigClass.model_type "
         "(a hyphen for an underscore, another spelling), and AutoModel.register(ConfigClass, ModelClass) needs "
         "ModelClass.config_class to be that ConfigClass (a model class still naming an older or parent config).",
         "Register with the class's own values: AutoConfig.register(MyConfig.model_type, MyConfig), and set the "
         "model class's config_class to the config class it is registered for (or register it for the config class "
         "it declares); the message names both sides. A restart fails the same way.", retry=False),
    # modeling_utils.py EmbeddingAccessMixin (5.x): "`get_input_embeddings` not auto‑handled for {class}; please
    # override in the subclass." (and set_input_embeddings'), the hyphen a non-breaking one (U+2011).
    _sig("hf-input-embeddings-not-found", r"`[gs]et_input_embeddings` not auto.handled for \w+",
         "transformers could not find the model's token embedding on the user's own PreTrainedModel subclass: "
         "resize_token_embeddings (and get_input_embeddings) looks for it as self.embed_tokens (or the class's "
         "_input_embed_layer), under self.embeddings, self.model, self.language_model or the base model, and the "
         "class keeps it under another attribute without overriding get_input_embeddings / set_input_embeddings.",
         "Override get_input_embeddings (return self.<your embedding>) and set_input_embeddings (assign it) in the "
         "model class, and get_output_embeddings / set_output_embeddings for a head to be resized with it; or name "
         "the attribute embed_tokens (or set _input_embed_layer to its name). A restart fails the same way.", retry=False),
    # modeling_utils.py PreTrainedModel.from_pretrained (5.x): "{cls} does not define `config_class`; pass an explicit
    # config to `from_pretrained`."
    _sig("hf-no-config-class", r"(?<!\w)\w+ does not define `config_class`; pass an explicit config to `from_pretrained`",
         "from_pretrained was called on the user's own PreTrainedModel subclass, which does not set config_class, so "
         "transformers has no config class to read the checkpoint's config.json with.",
         "Set config_class = YourConfig on the model class (with base_model_prefix), or pass config=YourConfig."
         "from_pretrained(dir) to from_pretrained. A restart fails the same way.", retry=False),
    # integrations/sdpa_attention.py sdpa_attention_forward: query (batch, heads, seq, dim) against key/value with the
    # key/value heads repeated num_attention_heads // num_key_value_heads times (repeat_kv); where the key/value heads do
    # not divide the query heads the repeated count differs and torch's scaled_dot_product_attention refuses dimension
    # 1 (the heads): "The size of tensor a (N) must match the size of tensor b (M) at non-singleton dimension 1".
    _sig("hf-kv-heads-not-divisor", r"sdpa_attention_forward\n(?:[^\n]*\n){0,3}?[^\n]*?scaled_dot_product_attention\("
         r"[^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*?(?P<ev>RuntimeError: The size of tensor a \(\d+\) must match the size of "
         r"tensor b \(\d+\) at non-singleton dimension 1)\b",
         "The attention's query heads and key/value heads do not line up: with grouped-query attention the config's "
         "num_attention_heads must be a multiple of num_key_value_heads (each key/value head serves "
         "num_attention_heads / num_key_value_heads query heads); a config built by hand with other numbers (4 and "
         "3) builds, and the first forward fails in scaled_dot_product_attention on the heads dimension (the two "
         "numbers in the message).",
         "Set num_key_value_heads to a divisor of num_attention_heads (equal for plain multi-head attention, 1 for "
         "multi-query), and num_attention_heads a divisor of hidden_size. A restart fails the same way.", retry=False),
    # huggingface_hub's strict dataclasses (utils/_strict_dataclass.py, which transformers 5's PreTrainedConfig uses):
    # "StrictDataclassFieldValidationError: Validation error for field 'n_embd':" then its cause "TypeError: Field
    # 'n_embd' expected int, got str (value: '64')".
    _sig("hf-config-field-type", r"StrictDataclassFieldValidationError: Validation error for field '\w+':[^\n]*\n"
         r"[^\n]*?(?P<ev>TypeError: Field '\w+' expected [^\n]{1,80}?, got \w+ \(value: [^\n]{0,80}\))",
         "A model config field got a value of the wrong type (the field, the type it expects and the value in the "
         "message): transformers 5's configs are strict dataclasses that check each field's type when built. A "
         "number read from the command line (argparse without type=int), an environment variable or a quoted YAML "
         "value arrives as a string; 4.0 for a count is a float.",
         "Convert the value before building the config: argparse's type=int / type=float, int(os.environ[...]), an "
         "unquoted number in YAML, int() for counts. A restart fails the same way.", retry=False),
)
