-- tensorcore_rules.sql — which kernels ran on Tensor Cores (NVIDIA) or matrix cores (AMD MFMA).
--
-- Answers: is this kernel a Tensor Core kernel? A kernel-name heuristic, tested on the real
-- traces in shared/traces: the first matching rule decides; no match means not Tensor Core.
-- Exclusions come first: FP32 SIMT GEMMs (*sgemm*, *simt*, cuBLAS *ffma* xmma kernels), gemv,
-- splitKreduce and FlashAttention's combine/pre/post-processing kernels never use Tensor Cores even
-- though they sit beside ones that do. Rules cover Volta through Hopper (sm90: wgmma, nvjet, CUTLASS 3)
-- and Blackwell (sm100/sm120: tcgen05/UMMA, block-scaled MX/NV FP8/FP6/FP4), and AMD CDNA (MFMA/XDL,
-- RDNA WMMA). Each rule's comment names where its kernel names come from; tests/test_tensorcore_rules.py
-- checks them on real names. Not decidable by name (so left out): Triton kernels (triton_tem_fused_mm…,
-- user-named @triton.jit functions), whose use of tl.dot and its dtype the name does not show — except the
-- library families whose source always multiplies with tl.dot/tl.dot_scaled (rule 47).
-- Binds: nothing. Creates: tensorcore_rules, is_tensorcore(activity, name) (the lookup).
CREATE OR REPLACE TEMP TABLE tensorcore_rules (
    rule_order    INTEGER,  -- evaluation order, lowest first
    is_tensorcore BOOLEAN,  -- what a match means
    pattern       VARCHAR   -- RE2 regular expression over the kernel name, case-insensitive
);
INSERT INTO tensorcore_rules VALUES
    -- FP32 SIMT kernels and helpers that run on the ordinary cores
    (10, false, '(sgemm|dgemm|gemv|splitkreduce|simt)'),
    -- FP32 FMA kernels under Tensor Core family names: cuBLAS/cuDNN/TensorRT `sm80_xmma_gemm_f32f32_f32f32_f32_
    -- tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas` (what cuBLAS
    -- picks for strict FP32 on A100 and H100 alike; public nsys/TensorRT tactic logs), and CUTLASS 3.x SIMT
    -- mainloops, whose MMA atom is cute::UniversalFMA (NVIDIA/cutlass include/cute/atom/mma_traits.hpp).
    (12, false, '(ffma|universalfma)'),
    -- FlashAttention's helper kernels beside the MMA kernels: split-KV combine, backward pre/post-processing.
    -- FA2: flash_fwd_splitkv_combine_kernel, flash_bwd_dot_do_o_kernel, flash_bwd_convert_dq_kernel/_dkv_kernel
    -- (Dao-AILab/flash-attention csrc/flash_attn/src/flash_fwd_launch_template.h, flash_bwd_launch_template.h);
    -- FA3: flash::FlashAttnFwdCombine, FlashAttnBwdPreprocess, FlashAttnBwdPostprocessConvertdQ (hopper/
    -- flash_fwd_combine_kernel.h, flash_bwd_preprocess_kernel.h, flash_bwd_postprocess_kernel.h); FA4 (CuTe DSL)
    -- FlashAttentionForwardCombine / FlashAttentionBackwardPreprocess|Postprocess (flash_attn/cute/).
    (14, false, '(flash.*(combine|preprocess|postprocess|convert_?d[qkv])|flash_bwd_dot_do_o|attn_bwd_preprocess)'),
    -- MIOpen's elementwise tensor ops, whose names hold "TensorOp" (SubTensorOpWithScalar1d,
    -- SubTensorOpWithCastTensor1d, Op2dTensorGeneric, OpTensorFwdBias: ROCm/MIOpen src/kernels/
    -- MIOpenSubTensorOpWithScalarKernel.cl, MIOpenTensorKernels.cl): plain vector ALU work, not CUTLASS tensorop
    (16, false, '(subtensorop|op[1-5]dtensor|optensor)'),
    -- classic cuBLAS/cuDNN Volta–Turing–Ampere names: h884, s1688, hmma, i8816 …
    (20, true,  '(h884|s884|h1688|s1688|hmma|i8816|16816|161616)'),
    -- xmma (Ampere/Hopper cuDNN convs and GEMMs, incl. sm80_xmma_fprop_implicit_gemm TF32), cutlass tensorop/wmma
    -- (also CUTLASS 3.x library names cutlass3x_sm90_tensorop_…, cutlass3x_sm100_bstensorop_…, cutlass3x_sm120_
    -- bstensorop_s16x8x32gemm_ue8m0xe4m3_… from NVIDIA/cutlass python/cutlass_library and issue #2186; CuTe MMA
    -- atoms SM90_64x128x16_F32BF16BF16_SS, SM100_MMA_F16BF16_SS; cuDNN SDPA sm80 `…_flash_fprop_wmma_f16_…`)
    (30, true,  '(xmma|tensorop|wmma|_mma|mma_|tf32)'),
    -- Hopper/Blackwell cuBLAS nvjet (nvjet_tst_…, nvjet_sm90_tst_…, nvjet_sm100_tst_…_2cta_…, nvjet_sm120_tst_mma_…,
    -- public sglang/vLLM profiles), warpgroup MMA, attention kernels: FA2 flash_fwd_kernel, FA3
    -- flash::FlashAttnFwdSm90 (Dao-AILab/flash-attention hopper/flash_fwd_launch_template.h), FA4
    -- flash::FlashAttentionForwardSm100 (flash_attn/cute/flash_fwd_sm100.py), TensorRT-LLM fmha_v2_…_sm90_kernel
    -- and trtllm-gen fmhaSm100fKernel_…, PyTorch fmha_cutlassF_…_sm80
    (40, true,  '(nvjet|wgmma|gmma|fmha|flash_?attn|flash_?attention|flash_fwd|flash_bwd|cutlass_?3x)'),
    -- cuDNN's generated SDPA kernels, cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_…,
    -- …_sdpa_sm100_flash_fprop_…, …_sdpa_sm120_flash_fprop_f16_knob_3_64x64x128_4x1x1 (PyTorch SDPA's cuDNN
    -- backend; public nsys profiles): the sm100/sm120 ones carry no MMA token at all
    (41, true,  'fort_native_sdpa'),
    -- Blackwell tcgen05/UMMA and block-scaled MX/NV FP8/FP6/FP4 GEMMs, from CUTLASS 3.8+/4.x dispatch policies
    -- (NVIDIA/cutlass include/cutlass/gemm/dispatch_policy.hpp: MainloopSm100TmaUmmaWarpSpecialized,
    -- MainloopSm100TmaUmmaWarpSpecializedBlockScaled, MainloopSm120TmaWarpSpecializedBlockScaled,
    -- KernelTmaWarpSpecialized1SmMxf8f6f4Sm100, KernelScheduleMxNvf4Sm100, Hopper's
    -- KernelTmaWarpSpecializedCooperativeFP8BlockScaledAccum; cute/arch/mma_sm100_umma.hpp SM100_MMA_MXF8F6F4_SS,
    -- SM100_MMA_MXF4NVF4_SS, cute::UMMA::Major) and CuTe DSL blockscaled_gemm_persistent (examples/python/CuTeDSL/
    -- blackwell). `umma` alone would also match "summation", so only its CUTLASS spellings count.
    (42, true,  '(sm1[0-9][0-9](array)?(tma)?umma|umma::|tcgen05|blockscaled|mxf8f6f4|mxf4|nvf4)'),
    -- CUTLASS 3.x/4.x GEMM kernels by their entry point, demangled `void cutlass::device_kernel<cutlass::gemm::
    -- kernel::GemmUniversal<…` and mangled `_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversal…` (vLLM and
    -- sglang CUTLASS FP8/FP4 and grouped MoE GEMMs; sgl-project/sglang PR #14544 kernel table). Their SIMT
    -- variants are excluded above (UniversalFMA); nsys truncates these names before the MMA atom, so this
    -- rule, not rule 30, is what catches them there. The same entry point around a library's own GEMM class:
    -- vLLM's CUTLASS FP8 GEMMs `void cutlass::device_kernel<vllm::cutlass_3x_gemm_sm90_fp8<cutlass::float_e4m3_t,
    -- …>>` and `…<vllm::cutlass_3x_gemm_fp8_blockwise<…>>` (vllm csrc/quantization/cutlass_w8a8/c3x/; names quoted
    -- in public cuda-gdb logs and kernel tables), mangled _ZN7cutlass13device_kernelIN4vllm15cutlass_3x_gemm….
    (43, true,  '(device_kernel<cutlass::gemm::kernel::gemmuniversal|device_kernelins_4gemm6kernel13gemmuniversal'
                || '|cutlass::device_kernel<[a-z0-9_:]*gemm|7cutlass13device_kernelin[0-9a-z_]*gemm)'),
    -- TensorRT-LLM's trtllm-gen Blackwell batched GEMMs (MoE experts, FP4/FP8), e.g.
    -- bmm_E2m1_E2m1E2m1_Fp32_bA16_bB16_bC16_t128x8x512u2_s5_et128x8_m128x8x64_cga1x1x1_16dp256b_rM_TN_transOut_…_
    -- sm100f, bmm_Bfloat16_E2m1E2m1_Fp32_…, bmm_E4m3_E4m3E4m3_Fp32_… (flashinfer trtllm_batched_gemm_runner.cu
    -- errors and public B200 profiles; TRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm), and its
    -- XQA decode attention, `kernel_mha` (TRT-LLM cpp/kernels/xqa/mha.cu, sXqaKernelMetaInfo), which runs its
    -- Q·K and P·V on HMMA/GMMA.
    (44, true,  '(^bmm_[a-z0-9]+_[a-z0-9]+_fp32_|(^|[^a-z0-9_])kernel_mha([^a-z0-9_]|$))'),
    -- FlashInfer's prefill/append attention (mma.sync on sm80, FA3-style wgmma on sm90): flashinfer::
    -- BatchPrefillWithPagedKVCacheKernel, BatchPrefillWithRaggedKVCacheKernel, SinglePrefillWithKVCacheKernel,
    -- PODWithKVCacheTensorKernel, BatchMLAPagedAttentionKernel (flashinfer-ai/flashinfer include/flashinfer/
    -- attention/prefill.cuh, pod.cuh, mla.cuh). Its BatchDecodeWithPagedKVCacheKernel runs on CUDA cores
    -- (decode.cuh; the Python wrapper's use_tensor_cores=True switches to the prefill kernels), so no rule.
    (45, true,  '(prefillwith[a-z]*kvcache|podwithkvcache|mlapagedattention)'),
    -- DeepGEMM's FP8/BF16 GEMMs: deep_gemm::sm90_fp8_gemm_1d2d_impl<…>, sm100_fp8_gemm_1d1d_impl, older
    -- deep_gemm::fp8_gemm_kernel (deepseek-ai/DeepGEMM deep_gemm/include/deep_gemm/impls/; vendored in
    -- flashinfer-ai/flashinfer flashinfer/deep_gemm.py). Its layout helpers (deep_gemm::transpose_…) name no gemm.
    (46, true,  'deep_gemm::[a-z0-9_]*gemm'),
    -- Triton library kernels whose source always multiplies on the matrix units (tl.dot / tl.dot_scaled; fp32
    -- inputs run as TF32/XF32 by default): triton_kernels' MoE matmul_ogs, incl. mxfp4 weights
    -- (_matmul_ogs_NNT_bf16xbf16xmxfp4_32x256x256x1_swiglu, _p_matmul_ogs_…: triton-lang/triton python/
    -- triton_kernels/triton_kernels/matmul_ogs_details/_matmul_ogs.py, _p_matmul_ogs.py), the fused-attention
    -- forward/backward (attn_fwd, _attn_fwd, _attn_bwd: triton-lang/triton python/tutorials/06-fused-attention.py,
    -- ROCm/aiter's and vLLM's Triton FA on MI300), and aiter's Triton GEMMs _gemm_a8w8_kernel, _gemm_a16_w16_kernel
    -- (ROCm/aiter aiter/ops/triton/gemm_a8w8.py, gemm_a16w16.py; AMD-AGI/TraceLens classify_kernels.py lists them)
    (47, true,  '(matmul_ogs|(^|[^a-z0-9])_*attn_(fwd|bwd)|_gemm_a[0-9]+_?w[0-9]+)'),
    -- AMD Tensile GEMMs that use MFMA carry _MI<m>x<n>x<k> in their names (rocBLAS, and hipBLASLt on CDNA3,
    -- Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_…)
    (50, true,  '_mi[0-9]+x[0-9]+x[0-9]+'),
    -- AMD matrix cores by library: composable_kernel XDL (= MFMA) kernels ck::kernel_gemm_xdl_cshuffle_v3<…>,
    -- kernel_gemm_xdl_cshuffle_v3_multi_d_blockscale_b_preshuffle, DeviceGemmXdl…, its MoE GEMM
    -- ck::kernel_moe_gemm<ck::GridwiseMoeGemmBlockScale…> (ROCm/composable_kernel include/ck/tensor_operation/
    -- gpu/grid/; aiter's CK GEMMs in MI300 traces), ck_tile warp GEMMs WarpGemmAttributeMfmaImpl… (include/
    -- ck_tile/ops/gemm/warp/warp_gemm_attribute_mfma_impl.hpp), and MIOpen's xdlops implicit GEMMs
    -- igemm_fwd_gtcx3_nhwc_fp16_… (gtc = generic tensor contraction, x = xdlops; ROCm/MIOpen). WMMA (RDNA3/4)
    -- is caught by rule 30.
    (52, true,  '(xdl|mfma|igemm_[a-z]+_gtcx|kernel_moe_gemm)'),
    -- half/bfloat16 GEMM families named by precision
    (60, true,  '(hgemm|bf16gemm|f16gemm|gemm_?bf16|gemm_?f16|bf16_?s16|ampere_fp16|ampere_bf16|turing_fp16|volta_fp16)');

-- is_tensorcore(activity, name): whether one device activity ran on Tensor Cores (only kernels can).
CREATE OR REPLACE TEMP MACRO is_tensorcore(activity, kernel_name) AS
    activity = 'kernel' AND coalesce((SELECT t.is_tensorcore FROM tensorcore_rules t
                                      WHERE regexp_matches(kernel_name, '(?i)' || t.pattern)
                                      ORDER BY t.rule_order LIMIT 1), false);
