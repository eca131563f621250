// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
//
// The built-in, ordered kernel classification table. First match wins. The order is the design:
//   1. memcpy/memset activity names (never kernels)
//   2. op-level families whose names embed generic words: communication, kv_cache, moe, attention,
//      sampling, normalization, positional, fused activation, quantization
//   3. GEMM-shaped names (cuBLAS/cuDNN/CUTLASS/nvjet tile names), before generic activations
//   because
//      GEMM names carry fused-epilogue words ("s16816gemm_relu", "scudnn_..._relu")
//   4. plain activations, embedding, generic elementwise/ATen families
//   5. library-level fallbacks ("gemm", "cutlass", "flashinfer", "triton_", "nccl")
// Patterns are lower-case and compared with the lower-cased demangled name. Rows were written from
// the dev split of tests/data/taxonomy only (see docs/taxonomy.md).

#include "src/model/taxonomy_rules.h"

#include <array>

namespace inferscope::model {
namespace {

constexpr MatchKind C = MatchKind::kContains;
constexpr MatchKind T = MatchKind::kToken;
constexpr MatchKind P = MatchKind::kPrefix;
constexpr MatchKind E = MatchKind::kExact;

constexpr Category kAttn = Category::kAttention;
constexpr Category kMm = Category::kMatmul;
constexpr Category kMoe = Category::kMoe;
constexpr Category kComm = Category::kCommunication;
constexpr Category kKv = Category::kKvCache;
constexpr Category kQuant = Category::kQuantization;
constexpr Category kNorm = Category::kNormalization;
constexpr Category kAct = Category::kActivation;
constexpr Category kPos = Category::kPositional;
constexpr Category kSamp = Category::kSampling;
constexpr Category kMem = Category::kMemory;
constexpr Category kEw = Category::kElementwise;
constexpr Category kEmb = Category::kEmbedding;
constexpr Category kOth = Category::kOther;

constexpr auto kRules = std::to_array<BuiltinRule>({
    // ---- 1. Copy-engine / memset activity (Kineto, CUPTI and nsys spellings) ----
    {P, "memcpy htod", "", kMem, "memory.memcpy_htod", "Kineto gpu_memcpy"},
    {P, "memcpy dtoh", "", kMem, "memory.memcpy_dtoh", "Kineto gpu_memcpy"},
    {P, "memcpy dtod", "", kMem, "memory.memcpy_dtod", "Kineto gpu_memcpy"},
    {P, "memcpy ptop", "", kMem, "memory.memcpy_ptop", "Kineto gpu_memcpy (peer)"},
    {P, "memcpy htoh", "", kMem, "memory.memcpy_htoh", "Kineto gpu_memcpy"},
    {P, "[cuda memcpy host-to-device", "", kMem, "memory.memcpy_htod", "nsys/CUPTI spelling"},
    {P, "[cuda memcpy device-to-host", "", kMem, "memory.memcpy_dtoh", "nsys/CUPTI spelling"},
    {P, "[cuda memcpy device-to-device", "", kMem, "memory.memcpy_dtod", "nsys/CUPTI spelling"},
    {P, "[cuda memcpy peer-to-peer", "", kMem, "memory.memcpy_ptop", "nsys/CUPTI spelling"},
    {P, "[cuda memcpy host-to-host", "", kMem, "memory.memcpy_htoh", "nsys/CUPTI spelling"},
    {P, "cuda memcpy htod", "", kMem, "memory.memcpy_htod", "nsys stats spelling"},
    {P, "cuda memcpy dtoh", "", kMem, "memory.memcpy_dtoh", "nsys stats spelling"},
    {P, "cuda memcpy dtod", "", kMem, "memory.memcpy_dtod", "nsys stats spelling"},
    {P, "cuda memcpy ptop", "", kMem, "memory.memcpy_ptop", "nsys stats spelling"},
    {P, "memcpy ", "", kMem, "memory.memcpy", "other/unknown copy direction"},
    {P, "[cuda memcpy", "", kMem, "memory.memcpy", "other/unknown copy direction"},
    {P, "cuda memcpy", "", kMem, "memory.memcpy", "other/unknown copy direction"},
    {P, "memset (", "", kMem, "memory.memset", "Kineto gpu_memset"},
    {P, "[cuda memset", "", kMem, "memory.memset", "nsys/CUPTI spelling"},
    {P, "cuda memset", "", kMem, "memory.memset", "nsys stats spelling"},

    // ---- 2a. Communication: custom all-reduce before NCCL (their names contain all_reduce) ----
    {C, "cross_device_reduce", "", kComm, "communication.custom_all_reduce",
     "vLLM/SGLang custom AR"},
    {C, "multimem_all_reduce", "", kComm, "communication.custom_all_reduce",
     "symm-mem multimem AR"},
    {C, "one_shot_all_reduce", "", kComm, "communication.custom_all_reduce", "torch symm-mem"},
    {C, "two_shot_all_reduce", "", kComm, "communication.custom_all_reduce", "torch symm-mem"},
    {C, "oneshotallreduce", "", kComm, "communication.custom_all_reduce", "TRT-LLM / c10d"},
    {C, "twoshotallreduce", "", kComm, "communication.custom_all_reduce", "TRT-LLM"},
    {C, "allreduce_fusion", "", kComm, "communication.custom_all_reduce", "TRT-LLM AR+norm"},
    {C, "mscclpp", "", kComm, "communication.custom_all_reduce", "MSCCL++"},
    {C, "deep_ep::", "", kComm, "communication.all_to_all", "DeepEP dispatch/combine"},
    // NCCL: ncclKernel_<Coll>_<Algo>_<Proto>_<Op>_<type> and ncclDevKernel_<Coll>_...
    {C, "sendrecv", "", kComm, "communication.send_recv", "NCCL point-to-point"},
    {C, "reducescatter", "", kComm, "communication.reduce_scatter", "NCCL"},
    {C, "allgather", "", kComm, "communication.all_gather", "NCCL"},
    {C, "allreduce", "", kComm, "communication.all_reduce", "NCCL"},
    {C, "alltoall", "", kComm, "communication.all_to_all", "NCCL / custom a2a"},
    {C, "_broadcast_", "", kComm, "communication.broadcast", "NCCL"},
    {P, "nccl", "", kComm, "communication.other", "any other NCCL kernel (Generic, Reduce)"},
    {C, "all_reduce", "", kComm, "communication.custom_all_reduce", "non-NCCL all-reduce"},
    {C, "all_gather", "", kComm, "communication.all_gather", "non-NCCL all-gather"},
    {C, "reduce_scatter", "", kComm, "communication.reduce_scatter", "non-NCCL reduce-scatter"},
    {C, "all_to_all", "", kComm, "communication.all_to_all", "non-NCCL all-to-all"},

    // ---- 2b. KV cache (before attention: MLA cache kernels contain "mla") ----
    {C, "reshape_and_cache", "", kKv, "kv_cache.store", "vLLM"},
    {C, "concat_and_cache", "", kKv, "kv_cache.store", "vLLM MLA"},
    {C, "appendpagedkvcache", "", kKv, "kv_cache.store", "FlashInfer"},
    {C, "store_kvcache", "", kKv, "kv_cache.store", "SGLang"},
    {C, "store_kv_cache", "", kKv, "kv_cache.store", "SGLang"},
    {C, "copy_blocks", "", kKv, "kv_cache.copy", "vLLM block copy"},
    {C, "swap_blocks", "", kKv, "kv_cache.copy", "vLLM swap"},
    {C, "gather_and_maybe_dequant_cache", "", kKv, "kv_cache.gather", "vLLM MLA"},
    {C, "gather_cache", "", kKv, "kv_cache.gather", "vLLM"},
    {C, "copy_page_indices", "", kKv, "kv_cache.page_table", "block-table copy"},
    {C, "req_to_token", "", kKv, "kv_cache.page_table", "SGLang token pool"},
    {C, "kv_indices", "", kKv, "kv_cache.page_table", "SGLang kv index build"},

    // ---- 2c. MoE (before softmax / topk / gemm) ----
    {C, "topkgatingsoftmax", "", kMoe, "moe.routing", "vLLM/TRT-LLM"},
    {C, "moesoftmax", "", kMoe, "moe.routing", ""},
    {C, "moetopk", "", kMoe, "moe.routing", ""},
    {C, "grouped_topk", "", kMoe, "moe.routing", "DeepSeek grouped routing"},
    {C, "moe_fused_gate", "", kMoe, "moe.routing", "SGLang"},
    {C, "topk_softmax", "", kMoe, "moe.routing", "router top-k softmax"},
    {C, "moe::dev::routing", "", kMoe, "moe.routing", "TRT-LLM gen routing"},
    {C, "moe_align", "", kMoe, "moe.permute", "token alignment to experts"},
    {C, "moe_sum", "", kMoe, "moe.permute", "expert output reduction"},
    {C, "count_and_sort_expert", "", kMoe, "moe.permute", ""},
    {C, "compute_expert_offsets", "", kMoe, "moe.permute", ""},
    {C, "compute_problem_sizes", "", kMoe, "moe.permute", ""},
    {C, "get_group_gemm_starts", "", kMoe, "moe.permute", "before the gemm fallback"},
    {C, "expandinputrows", "", kMoe, "moe.permute", "TRT-LLM"},
    {C, "finalizemoerouting", "", kMoe, "moe.permute", "TRT-LLM"},
    {C, "moe::dev::finalize", "", kMoe, "moe.permute", "TRT-LLM gen"},
    {C, "buildexpertmaps", "", kMoe, "moe.permute", "TRT-LLM"},
    {C, "computestridestmawarpspecialized", "", kMoe, "moe.permute", "TRT-LLM"},
    {C, "shufflerows", "", kMoe, "moe.permute", "SGLang"},
    {C, "prepare_moe", "", kMoe, "moe.permute", "SGLang"},
    {C, "apply_shuffle_mul_sum", "", kMoe, "moe.permute", "SGLang"},
    {C, "fused_moe", "", kMoe, "moe.gemm", "Triton fused MoE GEMM"},
    {C, "moe_wna16", "", kMoe, "moe.gemm", ""},
    {C, "moefcgemm", "", kMoe, "moe.gemm", "TRT-LLM grouped GEMM"},
    {C, "cutlass_moe_mm", "", kMoe, "moe.gemm", "vLLM grouped GEMM"},
    {C, "moe_gemm", "", kMoe, "moe.gemm", ""},
    {C, "dynbatch", "bmm", kMoe, "moe.gemm", "TRT-LLM gen batched expert GEMM"},
    {C, "moe::dev::", "", kMoe, "moe.other", "other TRT-LLM gen MoE kernels"},

    // ---- 2d. Attention (phase-specific before library-level) ----
    {C, "paged_attention", "", kAttn, "attention.decode", "vLLM paged attention v1/v2(+reduce)"},
    {C, "mergestate", "", kAttn, "attention.merge", "FlashInfer merge states"},
    {C, "merge_attn_states", "", kAttn, "attention.merge", "vLLM"},
    {C, "splitkv_combine", "", kAttn, "attention.merge", "FA2 split-KV combine"},
    {C, "flashattnfwdcombine", "", kAttn, "attention.merge", "FA3 combine"},
    {C, "mla_combine", "", kAttn, "attention.merge", "FlashMLA combine"},
    {C, "flash_attn_combine", "", kAttn, "attention.merge", "llama.cpp"},
    {T, "reduce_segments", "", kAttn, "attention.merge", "vLLM unified attention 3d reduce"},
    {C, "mlapagedattention", "", kAttn, "attention.mla", "FlashInfer MLA"},
    {C, "kernelmla", "", kAttn, "attention.mla", "FlashInfer decode MLA"},
    {C, "fmhamla", "", kAttn, "attention.mla", "CUTLASS MLA"},
    {C, "_mla_", "", kAttn, "attention.mla", "FlashMLA / cutlass_mla"},
    {C, "batchdecode", "", kAttn, "attention.decode", "FlashInfer"},
    {C, "singledecode", "", kAttn, "attention.decode", "FlashInfer"},
    {C, "masked_multihead_attention", "", kAttn, "attention.decode", "TRT-LLM MMHA"},
    {C, "flash_fwd_splitkv", "", kAttn, "attention.decode", "FA2 split-KV (decode path)"},
    {C, "flash_attn_vec", "", kAttn, "attention.decode", "llama.cpp vector (decode) kernel"},
    {C, "_fwd_grouped_kernel_stage", "", kAttn, "attention.decode", "Triton decode attention"},
    {C, "_fwd_kernel_stage", "", kAttn, "attention.decode", "Triton decode attention"},
    {E, "kernel_mha", "", kAttn, "attention.decode", "TRT-LLM XQA"},
    {C, "xqa", "", kAttn, "attention.decode", "TRT-LLM XQA"},
    {C, "forgen", "", kAttn, "attention.decode", "TRT-LLM gen fmha, generation phase"},
    {C, "persistentcontext", "", kAttn, "attention.prefill", "TRT-LLM gen fmha, context phase"},
    {C, "batchprefill", "", kAttn, "attention.prefill", "FlashInfer"},
    {C, "singleprefill", "", kAttn, "attention.prefill", "FlashInfer"},
    {C, "podwithkvcache", "", kAttn, "attention.prefill", "FlashInfer POD (prefill+decode)"},
    {C, "flash_fwd", "", kAttn, "attention.prefill", "FlashAttention-2 forward"},
    {C, "flashattnfwd", "", kAttn, "attention.prefill", "FlashAttention-3 forward"},
    {C, "fmha_v2", "", kAttn, "attention.prefill", "TRT-LLM context fmha"},
    {C, "fmha_cutlassf", "", kAttn, "attention.prefill", "PyTorch mem-efficient fwd"},
    {C, "sdpa", "", kAttn, "attention.prefill", "cuDNN SDPA"},
    {E, "_fwd_kernel", "", kAttn, "attention.prefill", "Triton prefix-prefill"},
    {C, "flash_bwd", "", kAttn, "attention.backward", "training"},
    {C, "fmha_cutlassb", "", kAttn, "attention.backward", "training"},
    {C, "flash_attn", "", kAttn, "attention.other", ""},
    {C, "flashattn", "", kAttn, "attention.other", ""},
    {C, "fmha", "", kAttn, "attention.other", ""},
    {C, "flex_attention", "", kAttn, "attention.other", "Inductor flex attention"},
    {C, "attention", "", kAttn, "attention.other", "any other *attention* kernel"},

    {C, "advance_step", "", kOth, "other.scheduler", "vLLM multi-step bookkeeping"},

    // ---- 2e. Sampling (before generic topk / softmax / argmax) ----
    {C, "samplingfromprob", "", kSamp, "sampling.top_k_top_p", "FlashInfer"},
    {C, "speculativesampling", "", kSamp, "sampling.speculative", ""},
    {C, "speculative_sampling", "", kSamp, "sampling.speculative", ""},
    {C, "verifytree", "", kSamp, "sampling.speculative", ""},
    {C, "verify_tree", "", kSamp, "sampling.speculative", ""},
    {C, "build_tree", "", kSamp, "sampling.speculative", ""},
    {C, "renormprob", "", kSamp, "sampling.top_k_top_p", "FlashInfer renorm"},
    {C, "masklogits", "", kSamp, "sampling.top_k_top_p", "FlashInfer"},
    {C, "topkstage", "", kSamp, "sampling.top_k_top_p", "TRT-LLM"},
    {C, "toppsampling", "", kSamp, "sampling.top_k_top_p", "TRT-LLM"},
    {C, "token_bitmask", "", kSamp, "sampling.constrained", "grammar masks"},
    {C, "logitsbitmask", "", kSamp, "sampling.constrained", ""},
    {C, "repetition_penalt", "", kSamp, "sampling.penalty", ""},
    {C, "applypenalty", "", kSamp, "sampling.penalty", "TRT-LLM"},
    {C, "multinomial", "", kSamp, "sampling.other", "torch.multinomial"},
    {C, "sbtopk::", "", kSamp, "sampling.top_k_top_p", "torch.topk"},
    {C, "mbtopk::", "", kSamp, "sampling.top_k_top_p", "torch.topk"},
    {T, "top_k_per_row", "", kSamp, "sampling.top_k_top_p", "vLLM"},
    {T, "top_k", "", kSamp, "sampling.top_k_top_p", ""},
    {T, "top_p", "", kSamp, "sampling.top_k_top_p", ""},
    {T, "argmax", "", kSamp, "sampling.greedy", "greedy token pick (not ATen ArgMaxOps)"},

    // ---- 2f. Normalization (fused norm+quant kernels are normalization) ----
    {C, "rms_norm", "", kNorm, "normalization.rms_norm", ""},
    {C, "rmsnorm", "", kNorm, "normalization.rms_norm", ""},
    {P, "triton_", "rsqrt", kNorm, "normalization.rms_norm", "Inductor mean/pow/rsqrt pattern"},
    {C, "layer_norm", "", kNorm, "normalization.layer_norm", ""},
    {C, "layernorm", "", kNorm, "normalization.layer_norm", ""},
    {C, "rowwisemoments", "", kNorm, "normalization.layer_norm", "ATen layer/group norm stats"},
    {C, "gammabetabackward", "", kNorm, "normalization.layer_norm", "ATen layer norm bwd"},
    {T, "norm_f32", "", kNorm, "normalization.layer_norm", "llama.cpp norm"},
    {C, "group_norm", "", kNorm, "normalization.group_norm", ""},
    {C, "computefusedparams", "", kNorm, "normalization.group_norm", "ATen group norm"},
    {C, "batch_norm", "", kNorm, "normalization.batch_norm", ""},
    {C, "bn_fw", "", kNorm, "normalization.batch_norm", "cuDNN"},
    {C, "bn_bw", "", kNorm, "normalization.batch_norm", "cuDNN"},
    {C, "qknorm", "", kNorm, "normalization.rms_norm", "QK norm"},
    {C, "softmax", "", kNorm, "normalization.softmax", "standalone softmax (see docs)"},
    {C, "soft_max", "", kNorm, "normalization.softmax", "llama.cpp"},

    // ---- 2g. Positional ----
    {C, "rotary", "", kPos, "positional.rope", ""},
    {T, "rope", "", kPos, "positional.rope", "token: not 'property'"},
    {C, "ropeupdate", "", kPos, "positional.rope", "TRT-LLM rope+kv update"},
    {P, "triton_", "cos", kPos, "positional.rope", "Inductor cos/sin rope tables"},

    // ---- 2h. Gated activations that may be fused with a quant ----
    {C, "act_and_mul", "", kAct, "activation.glu", ""},
    {C, "silu_and_mul", "", kAct, "activation.glu", ""},
    {C, "gelu_and_mul", "", kAct, "activation.glu", ""},
    {C, "swiglu", "", kAct, "activation.glu", ""},

    // ---- 2i. Quantization ----
    {C, "_repack", "", kQuant, "quantization.repack", "Marlin weight repack (not a GEMM)"},
    {C, "fp8rowwise_to_float", "", kQuant, "quantization.dequant", "fbgemm"},
    {C, "fp8_quant", "", kQuant, "quantization.fp8", ""},
    {C, "quant_fp8", "", kQuant, "quantization.fp8", ""},
    {C, "quant_8bit", "", kQuant, "quantization.fp8", "SGLang"},
    {C, "_fp8_", "quant", kQuant, "quantization.fp8", ""},
    {C, "fp8_qparam", "", kQuant, "quantization.fp8", "fbgemm fp8 scale"},
    {C, "hfp8", "", kQuant, "quantization.fp8", "fbgemm hfp8"},
    {C, "convert_fp8", "", kQuant, "quantization.fp8", "KV fp8 convert"},
    {C, "segmented_max_reduction", "", kQuant, "quantization.fp8", "vLLM fp8 scale"},
    {C, "int8_quant", "", kQuant, "quantization.int8", ""},
    {C, "quantize_q8", "", kQuant, "quantization.int8", "llama.cpp"},
    {C, "quantize_mmq", "", kQuant, "quantization.int8", "llama.cpp"},
    {C, "fp4", "", kQuant, "quantization.fp4", ""},
    {C, "quantize_with_block_size", "", kQuant, "quantization.block_scale",
     "TRT-LLM mx/nv fp4/fp8"},
    {C, "dequantize_mul_mat_vec", "", kMm, "matmul.gemv", "llama.cpp dmmv is a GEMV"},
    {C, "dequant", "", kQuant, "quantization.dequant", ""},
    {C, "per_token_quant", "", kQuant, "quantization.other", ""},
    {C, "per_token_group_quant", "", kQuant, "quantization.other", ""},

    // ---- 3. GEMM-shaped names (conv first: cuDNN conv kernels are implicit GEMMs) ----
    {C, "fprop", "", kMm, "matmul.conv", "cuDNN/CUTLASS forward conv"},
    {C, "dgrad", "", kMm, "matmul.conv", "conv data grad"},
    {C, "wgrad", "", kMm, "matmul.conv", "conv weight grad"},
    {C, "scudnn", "", kMm, "matmul.conv", "cuDNN conv"},
    {C, "convolve", "", kMm, "matmul.conv", "cuDNN implicit_convolve_sgemm"},
    {C, "convolution", "", kMm, "matmul.conv", ""},
    {C, "winograd", "", kMm, "matmul.conv", ""},
    {C, "fft2d_", "", kMm, "matmul.conv", "cuDNN FFT conv"},
    {C, "im2col", "", kMm, "matmul.conv", ""},
    {C, "cask_cudnn", "", kMm, "matmul.conv", "cuDNN conv helper"},
    {C, "cudnn::cnn", "", kMm, "matmul.conv", ""},
    {C, "gemv", "", kMm, "matmul.gemv", "cuBLAS gemv*"},
    {C, "mul_mat_vec", "", kMm, "matmul.gemv", "llama.cpp mmvq"},
    {T, "dot_kernel", "", kMm, "matmul.gemv", "cuBLAS dot"},
    {C, "reduce_1block_kernel", "", kMm, "matmul.gemv", "cuBLAS gemv/dot reduction"},
    {T, "scal_kernel", "", kMm, "matmul.gemv", "cuBLAS scal"},
    {C, "marlin", "", kMm, "matmul.marlin", ""},
    {C, "machete", "", kMm, "matmul.machete", ""},
    {C, "gptq", "", kMm, "matmul.gptq", ""},
    {C, "mul_mat_q", "", kMm, "matmul.gguf", "llama.cpp mmq"},
    {P, "nvjet", "", kMm, "matmul.nvjet", "cuBLAS nvjet"},
    {C, "cutlass_", "gemm", kMm, "matmul.cutlass", "cutlass_80_tensorop_* tile names"},
    {C, "cutlass3x", "", kMm, "matmul.cutlass", ""},
    {C, "cutlass::kernel", "", kMm, "matmul.cutlass", "cutlass::Kernel / Kernel2"},
    {C, "cutlass::gemm", "", kMm, "matmul.cutlass", ""},
    {C, "cutlass::device_kernel", "", kMm, "matmul.cutlass", ""},
    {C, "xmma_gemm", "", kMm, "matmul.cublas", "sm80/sm90 xmma gemm"},
    {C, "_cublas", "", kMm, "matmul.cublas", ""},
    {C, "sgemm", "", kMm, "matmul.cublas", "ampere_sgemm / volta_sgemm"},
    {C, "gcgemm", "", kMm, "matmul.cublas", ""},
    {C, "s16816gemm", "", kMm, "matmul.cublas", ""},
    {C, "s1688gemm", "", kMm, "matmul.cublas", ""},
    {C, "s884gemm", "", kMm, "matmul.cublas", ""},
    {C, "splitkreduce", "", kMm, "matmul.cublas", "cuBLASLt split-K reduce"},
    {C, "cublaslt", "", kMm, "matmul.cublas", "cuBLASLt epilogue"},
    {C, "gemmk1", "", kMm, "matmul.cublas", ""},
    {P, "triton_tem_", "", kMm, "matmul.triton", "Inductor template (mm/addmm/bmm)"},
    {P, "triton_", "mm", kMm, "matmul.triton", "Inductor mm decomposed into reductions"},
    {P, "triton_", "bmm", kMm, "matmul.triton", ""},

    // ---- 4a. Activations ----
    {C, "silu", "", kAct, "activation.silu", ""},
    {C, "gelu", "", kAct, "activation.gelu", ""},
    {C, "swish", "", kAct, "activation.silu", ""},
    {T, "relu", "", kAct, "activation.relu", ""},
    {C, "threshold_kernel", "", kAct, "activation.relu", "ATen relu"},
    {C, "tanh_kernel", "", kAct, "activation.tanh", ""},
    {C, "tanh_backward", "", kAct, "activation.tanh", ""},
    {C, "sigmoid_kernel", "", kAct, "activation.sigmoid", ""},
    {C, "sigmoid_backward", "", kAct, "activation.sigmoid", ""},
    {T, "elu_kernel", "", kAct, "activation.other", ""},
    {C, "activation_kernel", "", kAct, "activation.other", "vLLM"},

    // ---- 4b. Embedding ----
    {C, "split_embedding", "", kEmb, "embedding.table", "fbgemm TBE fwd/bwd"},
    {C, "embedding", "", kEmb, "embedding.lookup", ""},
    {C, "indexselect", "", kEmb, "embedding.index_select", "F.embedding forward"},
    {C, "get_rows", "", kEmb, "embedding.get_rows", "llama.cpp"},
    {C, "bounds_check_indices", "", kEmb, "embedding.sparse_features", "fbgemm"},
    {C, "linearize_index", "", kEmb, "embedding.table", "fbgemm TBE bwd"},
    {C, "permute_pooled_embs", "", kEmb, "embedding.table", "fbgemm"},
    {C, "fbgemm_gpu::", "", kEmb, "embedding.sparse_features", "fbgemm sparse ops"},
    {C, "recat_", "", kEmb, "embedding.sparse_features", "torchrec recat"},

    // ---- 4c. Generic elementwise / ATen families ----
    {C, "copy_kernel", "", kEw, "elementwise.copy", "ATen copy_/to(): runs on SMs, not DMA"},
    {C, "catarraybatchedcopy", "", kEw, "elementwise.copy", "torch.cat"},
    {C, "cpy_", "", kEw, "elementwise.copy", "llama.cpp"},
    {C, "concat", "", kEw, "elementwise.copy", ""},
    {C, "set_rows", "", kEw, "elementwise.copy", "llama.cpp"},
    {C, "fillfunctor", "", kEw, "elementwise.fill", "fill_/zero_"},
    {C, "distribution_", "", kEw, "elementwise.random", "torch random"},
    {C, "dropout", "", kEw, "elementwise.random", ""},
    {C, "native::reduce_kernel", "", kEw, "elementwise.reduce", "ATen reductions"},
    {C, "sum_rows", "", kEw, "elementwise.reduce", "llama.cpp"},
    {C, "_pool", "", kEw, "elementwise.pool", "max/avg pooling"},
    {C, "nchwtonhwc", "", kEw, "elementwise.layout", "cuDNN layout transform"},
    {C, "nhwctonchw", "", kEw, "elementwise.layout", "cuDNN layout transform"},
    {C, "radixsort", "", kEw, "elementwise.sort", "cub"},
    {C, "sort", "", kEw, "elementwise.sort", "bitonic/argsort"},
    {C, "cub::device", "", kEw, "elementwise.scan", "cub scan/compact/reduce-by-key"},
    {C, "multi_tensor_apply", "", kOth, "other.optimizer", "fused optimizer step (training)"},
    {C, "index", "", kEw, "elementwise.index", "index/index_put/gather/scatter"},
    {C, "gather", "", kEw, "elementwise.index", ""},
    {C, "scatter", "", kEw, "elementwise.index", ""},
    {C, "elementwise", "", kEw, "elementwise.pointwise", "ATen TensorIterator kernels"},
    {T, "bin_bcast", "", kEw, "elementwise.pointwise", "llama.cpp add/mul"},
    {T, "scale_f32", "", kEw, "elementwise.pointwise", "llama.cpp"},
    {C, "axpy", "", kEw, "elementwise.pointwise", "BLAS-1 style axpy"},
    {C, "to_dense", "", kEw, "elementwise.layout", ""},
    {T, "compute_cuda_kernel", "", kEw, "elementwise.other", "ATen repeat_interleave"},
    {C, "compute_batched_ptrs", "", kEw, "elementwise.other", "llama.cpp gemm setup"},

    // ---- 5. Library-level fallbacks ----
    {P, "triton__", "", kOth, "other.triton", "old Inductor names carry no op names"},
    {P, "triton_", "", kEw, "elementwise.triton", "Inductor pointwise/reduction"},
    {C, "gemm", "", kMm, "matmul.other", ""},
    {C, "cutlass", "", kMm, "matmul.cutlass", ""},
    {C, "cublas", "", kMm, "matmul.cublas", ""},
    {C, "flashinfer", "", kAttn, "attention.other", "FlashInfer is mostly attention"},
});

}  // namespace

std::span<const BuiltinRule> BuiltinRules() { return kRules; }

}  // namespace inferscope::model
