#!/usr/bin/env python3
"""Writes the tiny generated models the tests load with the real transformers.js.

No real model weights may be downloaded on a test machine, yet the loading code (tokenizer files,
config fields, ONNX input and output names, the KV cache) must be proven against the real runtime.
These models are random numbers in the right shapes, small enough to commit:

  electron/models/testing/models/anima-test/tiny-bert/   feature extraction, model_type "bert"
  electron/models/testing/models/anima-test/tiny-chat/   text generation, model_type "llama"

The outputs are committed, so CI never runs this. Rerun it (with a Python that has onnx and numpy,
e.g. Debian's python3-onnx: `/usr/bin/python3 scripts/make-tiny-models.py`) only to change the
models; the output is byte-for-byte the same for the same onnx version, as the seeds are fixed.
"""

import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "electron", "embed", "testing", "models", "anima-test")

# Opset 17: the newest onnx 1.12 knows; ReduceMean still takes its axes as an attribute there.
OPSET = 17

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

ENGLISH = """
the a an and or but if so because than then that this these those there here what who whom whose
which where when why how all any some many much more most few less no not nor only own same such
too very just also again ever never always often sometimes now still yet already soon later today
tonight tomorrow yesterday morning afternoon evening night day days week weeks month months year
years time times hour hours minute minutes moment i me my mine myself you your yours yourself he
him his himself she her hers herself it its itself we us our ours ourselves they them their theirs
themselves is am are was were be been being have has had having do does did doing done will would
shall should can could may might must go goes went gone going come comes came coming get gets got
getting make makes made making take takes took taken see sees saw seen look looks looked watch
know knows knew known think thinks thought say says said tell tells told talk talks talked speak
ask asks asked answer give gives gave given find found keep kept let put call called try tried use
used work works worked working play plays played feel feels felt want wants wanted need needs like
likes liked love loves loved hate remember remembered forget forgot learn learned read write wrote
written sit sits sat stand stood walk walked run ran eat ate eaten drink drank sleep slept wake
woke live lived die died buy bought sell sold pay paid open close start stop begin began end help
helped meet met leave left stay move moved bring brought hold held turn turned show showed hear
heard listen wait waited send sent build built grow grew lose lost win won happen happened cat cats
dog dogs bird birds fish horse animal mat rug chair table bed door window room house home garden
tree trees flower flowers grass sky sun moon star stars rain snow wind weather cloud water fire
food bread rice apple apples tea coffee milk cake dinner lunch breakfast car bus train plane road
street city town country world school class teacher student book books paper letter pen phone
computer email message music song songs movie film game games picture photo art story news friend
friends family mother mom father dad sister brother son daughter child children baby parent
parents wife husband man men woman women boy girl people person name names doctor nurse job office
company business boss team meeting project stock stocks market markets price prices money bank
dollar dollars cost costs trade economy rate rates interest invest fund sale profit loss share
shares happy sad angry tired afraid glad sorry good bad great nice fine best better worse worst
new old young big small large little long short high low hot cold warm cool fast slow easy hard
early late right wrong true false important different same sure free full empty dark light red
blue green white black beautiful quiet loud busy alone together again away back down up out in on
at to of for with from by about as into onto over under after before during between through
around without against near far inside outside one two three four five six seven eight nine ten
hundred thousand first second third last next other another each every both hello hi hey thanks
thank please yes okay ok maybe yeah memory memories dream dreams idea mind heart life health body
head hand hands eye eyes face voice word words question problem reason way thing things place
part kind lot number point fact case group side night end home feeling sleep user assistant system
""".split()

SUBWORDS = ["##s", "##es", "##ed", "##ing", "##ly", "##er", "##est", "##ion", "##y"]
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)]
DIGITS = [str(d) for d in range(10)]
PUNCTUATION = list(".,!?;:'\"()-[]/&%$#@*+=<>_")

# Single characters: BERT's normalizer puts spaces around every CJK character, so each is a word.
CHINESE = list(
    "我你他她它们的是不了在有人这那个上下中大小天日月年时间今明昨早晚好坏喜欢爱吃饭喝茶水咖啡书读写"
    "家朋友说话学生工作钱银行股票市场价格涨跌买卖猫狗鸟鱼坐垫子椅桌床门窗花树草雨雪风云太阳星"
    "一二三四五六七八九十百千万多少很也都还就要会能想看听走跑来去回到和与或但因为所以如果吗呢吧啊"
    "医生病身体心情高兴难过累忙记忆梦睡觉起电脑手机音乐电影游戏城市国家公司老师妈爸姐哥弟妹孩"
)


def vocabulary(extra_specials=()):
    tokens = list(SPECIALS) + list(extra_specials)
    seen = set(tokens)
    for token in ENGLISH + SUBWORDS + LETTERS + ["##" + c for c in LETTERS] + DIGITS + ["##" + d for d in DIGITS] + PUNCTUATION + CHINESE:
        if token not in seen:
            seen.add(token)
            tokens.append(token)
    return tokens


def added_token(token_id, content):
    return {
        "id": token_id,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }


def wordpiece_tokenizer(tokens, specials, post_processor):
    """A Hugging Face tokenizers JSON file: BERT's normaliser and pre-tokeniser, a WordPiece vocabulary."""
    ids = {token: i for i, token in enumerate(tokens)}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added_token(ids[t], t) for t in specials],
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": True,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": post_processor,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": ids,
        },
    }


def write_json(path, value):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(value, f, ensure_ascii=False, indent=1)
        f.write("\n")


def tensor(name, array):
    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def save_model(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="anima make-tiny-models")
    # IR 8 is what onnx 1.12 writes; pinned so a newer onnx does not silently change the files.
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


# ---------------------------------------------------------------------------------------------------
# tiny-bert: word embeddings (+ token type) and one masked self-attention layer with a residual.
# The residual keeps each token's own embedding dominant, so mean-pooled vectors of texts that share
# words are close and unrelated texts are not, while the attention makes padding matter: a wrong
# attention mask would change a text's vector depending on what it is batched with.


def make_bert():
    rng = np.random.RandomState(20240601)
    hidden = 32
    tokens = vocabulary()
    ids = {token: i for i, token in enumerate(tokens)}
    vocab_size = len(tokens)

    word = rng.standard_normal((vocab_size, hidden)).astype(np.float32)
    # [CLS] and [SEP] are in every text: small vectors keep them from pulling all texts together, yet
    # an empty text (only those two) still has a direction to normalise. Padding is never pooled.
    for token in SPECIALS:
        word[ids[token]] *= 0 if token == "[PAD]" else 0.1
    token_type = np.zeros((2, hidden), np.float32)
    token_type[1] = 0.1 * rng.standard_normal(hidden)
    wq = (0.3 * rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    wk = (0.3 * rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    wv = (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    wo = (0.2 * rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)

    dims = ["batch_size", "sequence_length"]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, dims) for name in ["input_ids", "attention_mask", "token_type_ids"]]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [hidden])]
    initializers = [
        tensor("embeddings.word_embeddings.weight", word),
        tensor("embeddings.token_type_embeddings.weight", token_type),
        tensor("attention.query.weight", wq),
        tensor("attention.key.weight", wk),
        tensor("attention.value.weight", wv),
        tensor("attention.output.weight", wo),
        tensor("scale", np.array(1 / np.sqrt(hidden), np.float32)),
        tensor("one", np.array(1, np.float32)),
        tensor("mask_value", np.array(-10000, np.float32)),
        tensor("axis_1", np.array([1], np.int64)),
    ]
    n = helper.make_node
    nodes = [
        n("Gather", ["embeddings.word_embeddings.weight", "input_ids"], ["word"]),
        n("Gather", ["embeddings.token_type_embeddings.weight", "token_type_ids"], ["type"]),
        n("Add", ["word", "type"], ["x"]),  # [batch, seq, hidden]
        n("MatMul", ["x", "attention.query.weight"], ["q"]),
        n("MatMul", ["x", "attention.key.weight"], ["k"]),
        n("MatMul", ["x", "attention.value.weight"], ["v"]),
        n("Transpose", ["k"], ["k_t"], perm=[0, 2, 1]),
        n("MatMul", ["q", "k_t"], ["raw_scores"]),  # [batch, seq, seq]
        n("Mul", ["raw_scores", "scale"], ["scores"]),
        # Padding keys get -10000 so no token attends to them.
        n("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        n("Unsqueeze", ["mask_f", "axis_1"], ["mask_row"]),  # [batch, 1, seq]
        n("Sub", ["one", "mask_row"], ["masked"]),
        n("Mul", ["masked", "mask_value"], ["mask_bias"]),
        n("Add", ["scores", "mask_bias"], ["biased"]),
        n("Softmax", ["biased"], ["probs"], axis=-1),
        n("MatMul", ["probs", "v"], ["context"]),
        n("MatMul", ["context", "attention.output.weight"], ["attended"]),
        n("Add", ["x", "attended"], ["last_hidden_state"]),
    ]
    graph = helper.make_graph(nodes, "tiny-bert", inputs, outputs, initializers)

    out = os.path.join(OUT, "tiny-bert")
    save_model(graph, os.path.join(out, "onnx", "model.onnx"))
    write_json(
        os.path.join(out, "config.json"),
        {
            "_comment": "Generated by scripts/make-tiny-models.py for tests: random weights, not a real model.",
            "architectures": ["BertModel"],
            "model_type": "bert",
            "hidden_size": hidden,
            "num_hidden_layers": 1,
            "num_attention_heads": 1,
            "intermediate_size": hidden,
            "hidden_act": "gelu",
            "max_position_embeddings": 512,
            "type_vocab_size": 2,
            "vocab_size": vocab_size,
            "pad_token_id": ids["[PAD]"],
            "torch_dtype": "float32",
        },
    )
    cls, sep = ids["[CLS]"], ids["[SEP]"]
    post_processor = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
        ],
        "pair": [
            {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            {"Sequence": {"id": "B", "type_id": 1}},
            {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
        ],
        "special_tokens": {
            "[CLS]": {"id": "[CLS]", "ids": [cls], "tokens": ["[CLS]"]},
            "[SEP]": {"id": "[SEP]", "ids": [sep], "tokens": ["[SEP]"]},
        },
    }
    write_json(os.path.join(out, "tokenizer.json"), wordpiece_tokenizer(tokens, SPECIALS, post_processor))
    write_json(
        os.path.join(out, "tokenizer_config.json"),
        {
            "tokenizer_class": "BertTokenizer",
            "do_lower_case": True,
            "tokenize_chinese_chars": True,
            "model_max_length": 512,
            "clean_up_tokenization_spaces": True,
            "cls_token": "[CLS]",
            "sep_token": "[SEP]",
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
            "mask_token": "[MASK]",
        },
    )


# ---------------------------------------------------------------------------------------------------
# tiny-chat: a one-layer Llama-shaped decoder (RMSNorm, two-head causal attention with a KV cache,
# SiLU-gated MLP, LM head) without rotary positions. transformers.js feeds `past_key_values.0.key`
# and `.value` ([batch, heads, past, head_dim]) and reads back `present.0.*`, exactly as for a real
# exported Llama, so generation goes through the same cache code.

CHAT_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def make_chat():
    rng = np.random.RandomState(20240602)
    hidden, heads, head_dim, intermediate = 32, 2, 16, 64
    tokens = vocabulary(CHAT_SPECIALS)
    ids = {token: i for i, token in enumerate(tokens)}
    vocab_size = len(tokens)

    def weight(rows, cols, scale=1.0):
        return (scale * rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32)

    embed = rng.standard_normal((vocab_size, hidden)).astype(np.float32)
    # The LM head is tied to the embeddings (as in small Llamas) behind a square projection: half the
    # file size of a separate head, and the next token is not simply the current one again.
    lm_proj = weight(hidden, hidden, 0.6)
    # Never sample a special token: the person sees words, and the reply ends at max_new_tokens (or
    # Stop), so tests know how long it runs. `<|im_end|>` is still the eos token the config names.
    lm_bias = np.zeros(vocab_size, np.float32)
    for token in SPECIALS + CHAT_SPECIALS:
        lm_bias[ids[token]] = -10000

    kv_dims = ["batch_size", heads, "past_sequence_length", head_dim]
    present_dims = ["batch_size", heads, "total_sequence_length", head_dim]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"]),
        helper.make_tensor_value_info("past_key_values.0.key", TensorProto.FLOAT, kv_dims),
        helper.make_tensor_value_info("past_key_values.0.value", TensorProto.FLOAT, kv_dims),
    ]
    outputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", vocab_size]),
        helper.make_tensor_value_info("present.0.key", TensorProto.FLOAT, present_dims),
        helper.make_tensor_value_info("present.0.value", TensorProto.FLOAT, present_dims),
    ]
    initializers = [
        tensor("model.embed_tokens.weight", embed),
        tensor("input_layernorm.weight", np.ones(hidden, np.float32)),
        tensor("post_attention_layernorm.weight", np.ones(hidden, np.float32)),
        tensor("model.norm.weight", np.ones(hidden, np.float32)),
        tensor("self_attn.q_proj.weight", weight(hidden, hidden)),
        tensor("self_attn.k_proj.weight", weight(hidden, hidden)),
        tensor("self_attn.v_proj.weight", weight(hidden, hidden)),
        tensor("self_attn.o_proj.weight", weight(hidden, hidden, 0.5)),
        tensor("mlp.gate_proj.weight", weight(hidden, intermediate)),
        tensor("mlp.up_proj.weight", weight(hidden, intermediate)),
        tensor("mlp.down_proj.weight", weight(intermediate, hidden, 0.5)),
        tensor("lm_head.proj", lm_proj),
        tensor("lm_head.bias", lm_bias),
        tensor("eps", np.array(1e-6, np.float32)),
        tensor("scale", np.array(1 / np.sqrt(head_dim), np.float32)),
        tensor("mask_value", np.array(-1e9, np.float32)),
        tensor("split_heads", np.array([0, 0, heads, head_dim], np.int64)),
        tensor("merge_heads", np.array([0, 0, hidden], np.int64)),
        tensor("i1", np.array(1, np.int64)),
        tensor("i0", np.array(0, np.int64)),
        tensor("i2", np.array(2, np.int64)),
        tensor("axes_0", np.array([0], np.int64)),
        tensor("axes_1", np.array([1], np.int64)),
        tensor("axes_1_2", np.array([1, 2], np.int64)),
    ]
    n = helper.make_node

    def rms_norm(x, weight_name, out):
        return [
            n("Mul", [x, x], [out + ".sq"]),
            n("ReduceMean", [out + ".sq"], [out + ".ms"], axes=[-1], keepdims=1),
            n("Add", [out + ".ms", "eps"], [out + ".mse"]),
            n("Sqrt", [out + ".mse"], [out + ".rms"]),
            n("Div", [x, out + ".rms"], [out + ".unit"]),
            n("Mul", [out + ".unit", weight_name], [out]),
        ]

    def heads_of(x, out):  # [b, s, hidden] -> [b, heads, s, head_dim]
        return [
            n("Reshape", [x, "split_heads"], [out + ".split"]),
            n("Transpose", [out + ".split"], [out], perm=[0, 2, 1, 3]),
        ]

    nodes = [n("Gather", ["model.embed_tokens.weight", "input_ids"], ["x"])]
    nodes += rms_norm("x", "input_layernorm.weight", "x_norm")
    nodes += [
        n("MatMul", ["x_norm", "self_attn.q_proj.weight"], ["q_flat"]),
        n("MatMul", ["x_norm", "self_attn.k_proj.weight"], ["k_flat"]),
        n("MatMul", ["x_norm", "self_attn.v_proj.weight"], ["v_flat"]),
    ]
    nodes += heads_of("q_flat", "q") + heads_of("k_flat", "k_new") + heads_of("v_flat", "v_new")
    nodes += [
        n("Concat", ["past_key_values.0.key", "k_new"], ["present.0.key"], axis=2),
        n("Concat", ["past_key_values.0.value", "v_new"], ["present.0.value"], axis=2),
        n("Transpose", ["present.0.key"], ["k_t"], perm=[0, 1, 3, 2]),
        n("MatMul", ["q", "k_t"], ["raw_scores"]),  # [b, heads, s, total]
        n("Mul", ["raw_scores", "scale"], ["scores"]),
        # Causal mask: the new tokens sit at positions total-s .. total-1 and see keys up to their own.
        n("Shape", ["present.0.key"], ["kv_shape"]),
        n("Gather", ["kv_shape", "i2"], ["total"], axis=0),
        n("Shape", ["input_ids"], ["ids_shape"]),
        n("Gather", ["ids_shape", "i1"], ["new"], axis=0),
        n("Sub", ["total", "new"], ["past"]),
        n("Range", ["past", "total", "i1"], ["query_pos"]),
        n("Range", ["i0", "total", "i1"], ["key_pos"]),
        n("Unsqueeze", ["query_pos", "axes_1"], ["query_col"]),  # [s, 1]
        n("Unsqueeze", ["key_pos", "axes_0"], ["key_row"]),  # [1, total]
        n("LessOrEqual", ["key_row", "query_col"], ["causal"]),  # [s, total]
        n("Cast", ["attention_mask"], ["mask_bool"], to=TensorProto.BOOL),
        n("Unsqueeze", ["mask_bool", "axes_1_2"], ["mask_4d"]),  # [b, 1, 1, total]
        n("And", ["causal", "mask_4d"], ["allowed"]),
        n("Where", ["allowed", "scores", "mask_value"], ["biased"]),
        n("Softmax", ["biased"], ["probs"], axis=-1),
        n("MatMul", ["probs", "present.0.value"], ["context_heads"]),
        n("Transpose", ["context_heads"], ["context_split"], perm=[0, 2, 1, 3]),
        n("Reshape", ["context_split", "merge_heads"], ["context"]),
        n("MatMul", ["context", "self_attn.o_proj.weight"], ["attended"]),
        n("Add", ["x", "attended"], ["h1"]),
    ]
    nodes += rms_norm("h1", "post_attention_layernorm.weight", "h1_norm")
    nodes += [
        n("MatMul", ["h1_norm", "mlp.gate_proj.weight"], ["gate"]),
        n("Sigmoid", ["gate"], ["gate_sigmoid"]),
        n("Mul", ["gate", "gate_sigmoid"], ["gate_silu"]),
        n("MatMul", ["h1_norm", "mlp.up_proj.weight"], ["up"]),
        n("Mul", ["gate_silu", "up"], ["gated"]),
        n("MatMul", ["gated", "mlp.down_proj.weight"], ["down"]),
        n("Add", ["h1", "down"], ["h2"]),
    ]
    nodes += rms_norm("h2", "model.norm.weight", "h2_norm")
    nodes += [
        n("MatMul", ["h2_norm", "lm_head.proj"], ["projected"]),
        n("Transpose", ["model.embed_tokens.weight"], ["lm_head.weight"], perm=[1, 0]),
        n("MatMul", ["projected", "lm_head.weight"], ["raw_logits"]),
        n("Add", ["raw_logits", "lm_head.bias"], ["logits"]),
    ]
    graph = helper.make_graph(nodes, "tiny-chat", inputs, outputs, initializers)

    out = os.path.join(OUT, "tiny-chat")
    save_model(graph, os.path.join(out, "onnx", "model.onnx"))
    eos, pad = ids["<|im_end|>"], ids["<|endoftext|>"]
    write_json(
        os.path.join(out, "config.json"),
        {
            "_comment": "Generated by scripts/make-tiny-models.py for tests: random weights, not a real model.",
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": hidden,
            "intermediate_size": intermediate,
            "num_hidden_layers": 1,
            "num_attention_heads": heads,
            "num_key_value_heads": heads,
            "head_dim": head_dim,
            "hidden_act": "silu",
            "max_position_embeddings": 2048,
            "rms_norm_eps": 1e-6,
            "tie_word_embeddings": True,
            "vocab_size": vocab_size,
            "bos_token_id": None,
            "eos_token_id": eos,
            "pad_token_id": pad,
            "use_cache": True,
            "torch_dtype": "float32",
        },
    )
    write_json(os.path.join(out, "generation_config.json"), {"eos_token_id": eos, "pad_token_id": pad})
    write_json(os.path.join(out, "tokenizer.json"), wordpiece_tokenizer(tokens, SPECIALS + CHAT_SPECIALS, None))
    write_json(
        os.path.join(out, "tokenizer_config.json"),
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "model_max_length": 2048,
            "clean_up_tokenization_spaces": True,
            "eos_token": "<|im_end|>",
            "pad_token": "<|endoftext|>",
            "unk_token": "[UNK]",
            "chat_template": CHAT_TEMPLATE,
        },
    )


if __name__ == "__main__":
    make_bert()
    make_chat()
    for root, _, files in sorted(os.walk(OUT)):
        for name in sorted(files):
            path = os.path.join(root, name)
            print(f"{os.path.relpath(path, ROOT)}  {os.path.getsize(path):,} bytes")
