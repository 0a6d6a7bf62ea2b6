# generates the zerosim scenarios for DeepSpeedExamples training/bf16_master_weight (baseline fp32-master rows)
import sys
def scen(name, h, L, heads, V, S, B, ngpu, ckpt):
    blk = 12*h*h + 13*h
    out = [f"# DeepSpeedExamples training/bf16_master_weight README (516082c6) + train.py (ac3800b7): SimpleTransformerModel",
           f"# (post-LN nn.MultiheadAttention need_weights=True, LayerNorm, GELU 4h, learned positions, untied biased output),",
           f"# hidden {h}, {L} layers, {heads} heads, vocab {V}, seq {S}, batch {B}, {ngpu} GPU(s), ZeRO-3 bf16 (fp32 master), ckpt={ckpt}",
           "version: 1", f"name: {name}", "stack: deepspeed",
           "cluster:", "  nodes: 1", f"  gpus_per_node: {ngpu}", "  gpu: H100-80GB",
           "model:", "  kind: transformer", "  arch: gpt", f"  hidden: {h}", f"  layers: {L}", f"  heads: {heads}", f"  vocab: {V}", f"  seq_len: {S}",
           "  layer_list:", f"    - {{name: embedding, params: {V*h + S*h}}}"]
    for i in range(L):
        out.append(f"    - {{name: block.{i}, params: {blk}, dims: {{hidden: {h}, heads: {heads}, kv_heads: {heads}, head_dim: {h//heads}, ffn: {4*h}}}}}")
    out.append(f"    - {{name: lm_head, params: {V*h + V}}}")
    out += ["parallelism:", f"  dp: {ngpu}", "  zero_stage: 3",
            "training:", f"  micro_batch: {B}", "  grad_accum: 1", "  param_dtype: bf16", "  optimizer: adamw",
            "  attention: eager", "  cross_entropy: bf16", "  keep_logits: bf16"]
    if ckpt: out.append("  recompute: full")
    open(name + ".yaml", "w").write("\n".join(out) + "\n")
scen("dsx_bf16mw_254m_1gpu", 1024, 12, 16, 50000, 512, 4, 1, False)
scen("dsx_bf16mw_254m_4gpu", 1024, 12, 16, 50000, 512, 4, 4, False)
scen("dsx_bf16mw_6.86b_4gpu", 4096, 32, 32, 50000, 512, 1, 4, False)
scen("dsx_bf16mw_6.86b_4gpu_ckpt", 4096, 32, 32, 50000, 512, 1, 4, True)
