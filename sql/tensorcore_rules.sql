-- tensorcore_rules.sql — which kernels ran on Tensor Cores (NVIDIA) or matrix cores (AMD MFMA).
--
-- Answers: is this kernel a Tensor Core kernel? A kernel-name heuristic, tested on the real
-- traces in shared/traces: the first matching rule decides; no match means not Tensor Core.
-- Exclusions come first: FP32 SIMT GEMMs (*sgemm*, *simt*), gemv and splitKreduce never use
-- Tensor Cores even though they sit beside ones that do.
-- Binds: nothing. Creates: tensorcore_rules, is_tensorcore(activity, name) (the lookup).
CREATE OR REPLACE TEMP TABLE tensorcore_rules (
    rule_order    INTEGER,  -- evaluation order, lowest first
    is_tensorcore BOOLEAN,  -- what a match means
    pattern       VARCHAR   -- RE2 regular expression over the kernel name, case-insensitive
);
INSERT INTO tensorcore_rules VALUES
    -- FP32 SIMT kernels and helpers that run on the ordinary cores
    (10, false, '(sgemm|dgemm|gemv|splitkreduce|simt)'),
    -- classic cuBLAS/cuDNN Volta–Turing–Ampere names: h884, s1688, hmma, i8816 …
    (20, true,  '(h884|s884|h1688|s1688|hmma|i8816|16816|161616)'),
    -- xmma (Ampere/Hopper cuDNN convs and GEMMs, incl. sm80_xmma_fprop_implicit_gemm TF32), cutlass tensorop/wmma
    (30, true,  '(xmma|tensorop|wmma|_mma|mma_|tf32)'),
    -- Hopper/Blackwell cuBLAS nvjet, warpgroup MMA, attention kernels
    (40, true,  '(nvjet|wgmma|gmma|fmha|flash_?attn|flash_fwd|flash_bwd|cutlass3x)'),
    -- AMD Tensile GEMMs that use MFMA carry _MI<m>x<n>x<k> in their names
    (50, true,  '_mi[0-9]+x[0-9]+x[0-9]+'),
    -- half/bfloat16 GEMM families named by precision
    (60, true,  '(hgemm|bf16gemm|f16gemm|gemm_?bf16|gemm_?f16|bf16_?s16|ampere_fp16|ampere_bf16|turing_fp16|volta_fp16)');

-- is_tensorcore(activity, name): whether one device activity ran on Tensor Cores (only kernels can).
CREATE OR REPLACE TEMP MACRO is_tensorcore(activity, kernel_name) AS
    activity = 'kernel' AND coalesce((SELECT t.is_tensorcore FROM tensorcore_rules t
                                      WHERE regexp_matches(kernel_name, '(?i)' || t.pattern)
                                      ORDER BY t.rule_order LIMIT 1), false);
