"""sql/tensorcore_rules.sql on real kernel names: Hopper, Blackwell, AMD CDNA, and the look-alikes
that must stay off the Tensor Core count.

The rule file runs through DuckDB exactly as the product loads it (store/ingest/timeline.py
`open_connection` runs the rule files). Every name below was seen in public code, a public profile
or one of the shared traces; the comment beside it says where. A few are cut where their source cut
them (nsys and most kernel tables shorten long template names) — the rules must decide on the part a
profile actually shows."""

from __future__ import annotations

import pytest

from libreyolo_profile.store.ingest.timeline import open_connection
from tests.conftest import cli_json
from tests.synthetic_traces import annotation, kernel, op, runtime, write_trace

HOPPER = [
    # cuBLASLt nvjet, sm90 (nsys cuda_gpu_kern_sum tables quoted in public vLLM/sglang benchmark notes)
    "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT",
    "nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT",
    "nvjet_tss_256x128_64x4_1x2_h_bz_coopA_TNT",
    "nvjet_sss_tf32_128x256_TNT",
    # legacy cuBLAS on Hopper (shared trace h100_vit_image_classifier)
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    # CUTLASS 3.x GEMM, demangled by Kineto (a public kernel-taxonomy test's "REAL" symbol, cut there)
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int,int,int>, "
    "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<9, "
    "cute::tuple<cute::C<1>,cute::C<1>,cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedPingpong>, "
    "cute::tuple<cute::C<128>,cute::C<64>,cute::C<64> >, cutlass::bfloat16_t, cute::TiledMMA<cute::MMA_Atom<cut",
    # CUTLASS 3.x grouped GEMM as nsys cuts it (a public nsys cuda_gpu_kern_sum export)
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<"
    "cute::tuple<long, long, long>>, cutlass::gemm::collective::CollectiveMma<"
    "cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecialized<(int)12, ...",
    # the same family mangled (sgl-project/sglang PR #14544, kernel size table)
    "_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalINS1_17GroupProbl...",
    # FlashAttention-3 forward (a public profile's top_kernels JSON; Dao-AILab/flash-attention hopper/)
    "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90"
    "<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<176>, cute::C<128> >, "
    "128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, false, false, false, false, false, false, false, fals",
    # cuDNN SDPA behind PyTorch's scaled_dot_product_attention (public H200 profiling notes)
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
    # FlashInfer prefill (public sglang profile tables; flashinfer-ai/flashinfer attention/prefill.cuh)
    "void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::",
    "flashinfer::BatchPrefillWithRaggedKVCacheKernel",
    # TensorRT-LLM fmha_v2 (its kernel-traits printf in cpp/kernels/fmha_v2; a public TensorRT engine profile)
    "fmha_v2_flash_attention_fp16_64_256_S_32_tma_ws_sm90_kernel",
    "fmha_v2_flash_attention_fp16_64_32_S_qkv_128_causal_sm86_kernel_nl",
    # TensorRT-LLM XQA decode attention (sXqaKernelMetaInfo's kernel name, TRT-LLM)
    "kernel_mha",
    # DeepGEMM FP8 GEMM on sm90 (public vLLM kernel diff tables, cut there)
    "void deep_gemm::sm90_fp8_gemm_1d2d_impl<(cute::UMMA::Major)0, 0u, 4096u, 1024u, 1u, 256u, 128u, 128u, "
    "128u, 128u, 128u, 3u, 128u, 256u, 2u, true, 132u, (deep_gemm::GemmType)0, dee",
]

BLACKWELL = [
    # cuBLASLt nvjet on sm100 (B200) and sm120 (RTX 50) (public sglang profiles, a public hook audit)
    "nvjet_sm100_tst_64x16_64x16_2x4_2cta_h_bz_splitK_TNT",
    "nvjet_sm100_tst_16x64_64x16_4x1_v_bz_TNN",
    "nvjet_sm120_tst_mma_64x64x128_3_32x32x128_tmaAB_alignCD4_bz_TNNN",
    # trtllm-gen block-scaled FP4 MoE GEMMs (flashinfer trtllm_batched_gemm_runner.cu error texts)
    "bmm_E2m1_E2m1E2m1_Fp32_bA16_bB16_bC16_t128x8x512u2_s5_et128x8_m128x8x64_cga1x1x1_16dp256b_rM_TN_transOut_"
    "schedS_biasM_bN_ldgsts_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
    "bmm_Bfloat16_E2m1E2m1_Fp32_Ab16_Bb16_t128x8x512_s5_et128x8_m128x8x64_c1x1x1_rM_TN_transOut",
    # trtllm-gen attention on sm100 (a public DeepSeek-R1 B200 kernel breakdown, cut there)
    "fmhaSm100fKernel_QkvE4m3OBfloat16HQk5...",
    # CUTLASS 3.x library names, block-scaled FP8 on sm120 (NVIDIA/cutlass issue #2186)
    "cutlass3x_sm120_bstensorop_s16x8x32gemm_ue8m0xe4m3_ue8m0xe4m3_f32_void_e5m2_128x128x128_1x1x1_0_tnt_"
    "align128_pingpong_q",
    # CUTLASS 3.x NVFP4 GEMM, cut before any MMA token (a public llama.cpp-style kernel inventory)
    "cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, ...",
    # the UMMA block-scaled mainloop and MMA atom of a CUTLASS 3.x NVFP4 GEMM, as a public compiled-types
    # dump lists them (namespaces added as Kineto demangles them; NVIDIA/cutlass dispatch_policy.hpp,
    # cute/arch/mma_sm100_umma.hpp): the part of the kernel name that survives when its head is cut
    "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm100TmaUmmaWarpSpecializedBlockScaled"
    "<3, 2, 1, ClusterShape, Sm100>",
    "cute::MMA_Atom<cute::SM100_MMA_MXF4_2x1SM_SS<cutlass::float_e2m1_t, cutlass::float_e2m1_t, float",
    # FlashAttention-4 (CuTe DSL) forward (a public attention-backend classifier's name list)
    "flash::FlashAttentionForwardSm100",
    # cuDNN SDPA on sm120: no MMA token in the name at all (public nsys kernel breakdown)
    "cudnn_generated_fort_native_sdpa_sm120_flash_fprop_f16_knob_3_64x64x128_4x1x1",
]

# issue 49: FP8/FP4 GEMMs whose names carry no MMA token
FP8_FP4 = [
    # vLLM's CUTLASS FP8 GEMMs as Kineto demangles them (a public cuda-gdb log; a public kernel-name simplifier test)
    "void cutlass::device_kernel<vllm::cutlass_3x_gemm_sm90_fp8<cutlass::float_e4m3_t, cutlass::bfloat16_t, "
    "vllm::c3x::ScaledEpilogue, cute::tuple<cute::C<64>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<2>, "
    "cute::C<1>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedPingpongFP",
    "void cutlass::device_kernel<vllm::cutlass_3x_gemm_fp8_blockwise<cutlass::bfloat16_t, (int)1, (int)128>>(T1)",
    # cuBLASLt FP8 on Hopper (torch._scaled_mm; public nsys tables)
    "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    # triton_kernels' MoE GEMM with mxfp4 weights (gpt-oss; public vLLM porting notes and compute-sanitizer logs)
    "_matmul_ogs_NNT_bf16xbf16xmxfp4_32x256x256x1_swiglu",
    "_p_matmul_ogs_NNT_bf16xbf16xmxfp4",
    # aiter's Triton FP8 GEMM on MI300 (ROCm/aiter aiter/ops/triton/gemm_a8w8.py)
    "_gemm_a8w8_kernel",
    # Triton fused attention (shared trace corpus/mi300__Falconsai…: attn_fwd; triton-lang tutorials/06-fused-attention)
    "attn_fwd",
    "_attn_bwd",
]

AMD = [
    # rocBLAS Tensile MFMA GEMMs (shared trace mi250_rocm_minitoy)
    "Cijk_Ailk_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0",
    # hipBLASLt on CDNA3 MI300 (a public aiter tuning note) and FP32 MFMA (a public rocprof log)
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_...",
    "Cijk_Ailk_Bljk_SB_MT128x96x16_MI32x32x2x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS0_ASE_ASGT",
    # composable_kernel XDL (= MFMA) GEMMs from aiter, demangled and mangled (public MI300 profiles)
    "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemmMultiD_ABScale_xdl_cshuffle_v3<"
    "ck::tensor_layout::gemm::RowMajor, c",
    "_ZN2ck59kernel_gemm_xdl_cshuffle_v3_multi_d_blockscale_b_preshuffleINS_58GridwiseGemm",
    "_ZN2ck15kernel_moe_gemmINS_25GridwiseMoeGemmBlockScaleINS_13tensor_layout4gemm",
    # the warp-GEMM type inside a ck_tile kernel's demangled name (ROCm/composable_kernel
    # include/ck_tile/ops/gemm/warp/warp_gemm.hpp, warp_gemm_attribute_mfma_impl.hpp)
    "ck_tile::WarpGemmImpl<ck_tile::WarpGemmAttributeMfma<ck_tile::WarpGemmAttributeMfmaImplF16F16F32M32N32K8",
    # MIOpen xdlops implicit-GEMM convolution (a public rocprof stats CSV)
    "igemm_fwd_gtcx3_nhwc_fp16_bx0_ex0_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64_gkgs",
]

NOT_TENSOR_CORE = [
    # strict-FP32 cuBLAS/cuDNN under an xmma name: FFMA on CUDA cores (public nsys tables; TensorRT tactics)
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
    "sm80_xmma_fprop_implicit_gemm_indexed_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize64x64x8_stage3_warpsize1x4x1_g1_ffma_aligna4_alignc4",
    # SIMT GEMMs (shared trace a100_alexnet_no_profilerstep; public PyTorch profiler tables)
    "ampere_sgemm_32x32_sliced1x4_tn",
    "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>"
    "(cutlass_80_simt_sgemm_64x64_8x5_tn_align1::Params)",
    # gemv and split-K reduction (shared trace a100_cutlass_adam_rank0)
    "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false, cublasGemvParams<",
    "void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<float>, float const*",
    # Tensile without MFMA: no _MI<m>x<n>x<k> (a public rocprof kernel table)
    "Cijk_Ailk_Bljk_SB_MT128x64x8_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASAE01_ASCE01_ASEM1_AAC0_BL1",
    # FlashAttention helpers beside the MMA kernels: split-KV combine (FA2, FA3), the varlen scheduler
    "void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<256, 64, 64, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<256, 64, 64, 4, cutlass::bfloat16_t> >, 4, 6, true>(fla",
    "flash::FlashAttnFwdCombine",
    "flash::prepare_varlen_num_blocks_kernel",
    # FlashInfer decode runs on CUDA cores; its all-reduce and CuTe DSL RMSNorm are not matrix work
    # (public sglang/B200 profiles)
    "BatchDecodeWithPagedKVCacheKernel",
    "void flashinfer::trtllm_allreduce_fus...",
    "kernel_cutlass_kernel_flashinfernormkernelsfused_add_rmsnormFusedAddRMSNormKernel_object_a",
    # FP4 quantisation beside the FP4 GEMMs (a public vLLM CUDA-graph contract)
    "ScaledFp4QuantKernel",
    "SiluAndMulFp4QuantKernel",
    # DeepEP communication beside DeepGEMM (a public nsys summary)
    "deep_ep::intranode::cached_notify_combine",
    # MIOpen elementwise tensor ops: "TensorOp" in the name, no matrix core (corpus/mi300__resnet_act_checkpoint)
    "SubTensorOpWithScalar1d",
    "SubTensorOpWithCastTensor1d",
    "Op2dTensorGeneric",
    # the Triton attention backward's row-sum pre-pass (triton-lang tutorials/06-fused-attention.py)
    "_attn_bwd_preprocess",
    # DeepEP dispatch and NCCL kernels move data (a public kernel-category test; NCCL 2.19+)
    "void deep_ep::internode_ll::dispatch<true, 3, 10, 7168>(void*, float*, int*, long*, int*, void*, int*, void*",
    "ncclDevKernel_AllGather_RING_LL",
    # ordinary PyTorch kernels (shared trace h100_vit_image_classifier)
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
    "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
]

TENSOR_CORE = HOPPER + BLACKWELL + AMD + FP8_FP4

B200 = {"id": 0, "name": "NVIDIA B200", "totalGlobalMem": 191_514_689_536}


@pytest.fixture
def rules():
    con = open_connection()
    yield con
    con.close()


def _is_tensorcore(con, name: str) -> bool:
    return con.execute("SELECT is_tensorcore('kernel', $name)", {"name": name}).fetchone()[0]


def _category(con, name: str) -> str:
    return con.execute("SELECT kernel_category('kernel', $name)", {"name": name}).fetchone()[0]


@pytest.mark.parametrize("name", TENSOR_CORE)
def test_current_tensor_core_kernels_count(rules, name):
    assert _is_tensorcore(rules, name) is True


@pytest.mark.parametrize("name", NOT_TENSOR_CORE)
def test_look_alikes_stay_off_the_tensor_core_count(rules, name):
    assert _is_tensorcore(rules, name) is False


@pytest.mark.parametrize("name", TENSOR_CORE)
def test_tensor_core_kernels_count_as_gemm(rules, name):
    """The matrix categories: GEMM/convolution, or attention (its own category since issue 24: gemm_pct
    counts GEMM/convolution only); a Tensor Core kernel outside both would be missing from the matrix work."""
    assert _category(rules, name) in ("gemm", "attention")


def test_only_kernels_run_on_tensor_cores(rules):
    # a memcpy whose name happens to contain an MMA token is still a copy
    assert rules.execute("SELECT is_tensorcore('memcpy', 'nvjet_tst_128x96')").fetchone()[0] is False


def test_a_blackwell_step_counts_its_block_scaled_gemms(tmp_path):
    """One step on one device: an FP4 trtllm-gen MoE GEMM (600 µs), an nvjet GEMM (200 µs) and an
    elementwise kernel (200 µs). Tensor Core share of kernel time = (600 + 200) / 1000 = 80%."""
    fp4_moe_gemm, nvjet, elementwise = (
        BLACKWELL[3],
        BLACKWELL[0],
        "void at::native::vectorized_elementwise_kernel<4>(int)",
    )
    events = [annotation("ProfilerStep#1", 0, 2000), op("aten::mm", 90, 60)]
    for correlation, (name, start, duration) in enumerate(
        [(fp4_moe_gemm, 200, 600), (nvjet, 850, 200), (elementwise, 1100, 200)], start=1
    ):
        events += [
            runtime("cudaLaunchKernel", 100 + 10 * correlation, 5, correlation),
            kernel(name, start, duration, correlation),
        ]
    trace = write_trace(tmp_path / "blackwell.json", events, [B200])
    assert cli_json("get", str(trace), "tensorcore_pct")["value"] == pytest.approx(80.0)
