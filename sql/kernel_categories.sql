-- kernel_categories.sql — the ordered rule table that names a device activity's category.
--
-- Answers: which category does a GPU kernel belong to? The first rule (lowest rule_order) whose
-- case-insensitive regular expression matches the kernel name wins; a kernel no rule matches is
-- 'other'. memcpy and memset activities are categorised by their kind, not by these rules.
-- Binds: nothing. Creates: kernel_category_rules, kernel_category(activity, name) (the lookup, used by
-- sql/ingest.sql and the built-in converter alike) and kernel_category_shares (which categories make up
-- each share of kernel time a profile reports, read by sql/kernel_shares.sql).
--
-- Rules are matched on what a kernel does, not on where its code lives: a name is first stripped of its
-- function's namespaces ("fbgemm_gpu::", "at::native::(anonymous namespace)::"; a GEMM library's are
-- kept), so fbgemm_gpu::permute_* is a permute, not a "gemm". A rule with match = 'own' looks only
-- at the kernel's own function name (the identifier before its template arguments and parameters:
-- "reshape_and_cache_flash" in vllm::reshape_and_cache_flash_kernel<…cutlass…>), and those go first;
-- the 'full' rules read the stripped name with its template arguments, where CUTLASS and cuDNN say
-- which engine a generic `Kernel<…>` runs.
-- A rule with match = 'name' reads the name as recorded, namespaces kept: for the libraries whose kernels
-- say what they do only by their namespace (deep_ep::internode_ll::dispatch is an all-to-all; its own name,
-- "dispatch", is not). A mangled name (_Z…) has no own name short of demangling: only its full rules apply.
-- Order matters: own-name rules first, then communication before everything (nccl kernels contain
-- "reduce"), embedding lookups before the optimizer (TBE's backward fuses its optimizer), attention
-- before gemm, norm and layout before gemm (cuDNN's nchwToNhwc helpers live beside its convolutions),
-- gemm before reduce (cuBLAS splitKreduce is part of a GEMM).
-- tests/test_kernel_categories.py holds, per rule, the real kernel names it must (and must not) match.
CREATE OR REPLACE TEMP TABLE kernel_category_rules (
    rule_order INTEGER,  -- evaluation order, lowest first
    category   VARCHAR,  -- the category a match assigns
    match      VARCHAR,  -- own: the kernel's own function name | full: the namespace-stripped name | name: as recorded
    pattern    VARCHAR,  -- RE2 regular expression, case-insensitive
    source     VARCHAR   -- where the rule comes from (the library whose kernels it names)
);
INSERT INTO kernel_category_rules VALUES
    (1, 'elementwise', 'own', '(rotary|rope_|quantize|dequant|bucketize|_cast|convert_fp8|scaled_fp8|fp8_?rowwise_to|hfp8)',
        'vLLM/TensorRT-LLM rotary embedding, FP8/FP4 quantize kernels, fbgemm_gpu bucketize and FP8 row-wise/HFP8 conversions: elementwise passes'),
    (2, 'layout', 'own', '(permute|reshape_and_cache|jagged|transpose|concat)',
        'fbgemm_gpu permute_*/jagged_*, vLLM reshape_and_cache(_flash): data movement'),
    (3, 'reduce', 'own', '(finalize|topk_?gating|moe_?sum)', 'MoE finalize/gating (vLLM, TensorRT-LLM): weighted sums of expert outputs'),
    (4, 'embedding', 'own', '(embedding|tbe_|bounds_check_indices|linearize_index|embedding_bag)',
        'fbgemm_gpu table-batched embeddings (split_embedding_*), PyTorch embedding(_bag): memory-bound gathers'),
    -- TorchInductor names a kernel by the ops it fused: a pointwise or reduction kernel beside a functional
    -- collective carries the collective's name but moves no data between ranks (AMD-AGI/TraceLens
    -- classify_kernels.py keeps these out of communication too)
    (5, 'elementwise', 'own', '^triton_poi_fused_.*(all_?reduce|all_?gather|reduce_?scatter|all_?to_?all)', 'TorchInductor pointwise kernels named after a fused collective'),
    (6, 'reduce', 'own', '^triton_(red|per)_fused_.*(all_?reduce|all_?gather|reduce_?scatter|all_?to_?all)', 'TorchInductor reductions named after a fused collective'),
    -- expert-parallel all-to-all by namespace: DeepEP's dispatch/combine/notify kernels (deepseek-ai/DeepEP
    -- csrc/kernels/intranode.cu, internode.cu, internode_ll.cu: deep_ep::intranode::notify_dispatch,
    -- deep_ep::internode_ll::dispatch<…>, …::combine<…>, …::clean_low_latency_buffer; mangled _ZN7deep_ep9intranode…),
    -- and NVSHMEM's own device kernels (nvshmemi_*, nvshmemx_* collectives on a stream)
    (8, 'communication', 'name', '(deep_ep(::|[0-9]+)(intra|inter)node|nvshmem)', 'DeepEP (NVSHMEM/NVLink expert-parallel all-to-all), NVSHMEM'),
    -- collectives by name: NCCL's ncclKernel_*/ncclDevKernel_* and RCCL's (rccl keeps NCCL's names), vLLM/sglang
    -- custom all-reduce (vllm::cross_device_reduce_1stage/2stage, csrc/custom_all_reduce.cuh), TensorRT-LLM/
    -- FlashInfer Lamport all-reduce fusion and MNNVL MoE all-to-all (moeA2ADispatchKernel, moeA2ACombineKernel:
    -- TRT-LLM cpp/tensorrt_llm/kernels/communicationKernels/moeAlltoAllKernels.cu), ROCm MoRI's expert-parallel
    -- EpDispatchIntraNodeKernel/EpCombineInterNodeKernel (ROCm/mori src/ops/dispatch_combine), PyTorch
    -- symmetric-memory one_shot_all_reduce/multimem_all_reduce, dlslime's intranode_alltoall_kernel
    (10, 'communication', 'full', '(nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|all2all|sendrecv|cross_device_reduce|lamport|moea2a|ep(dispatch|combine)(intra|inter)node)',
        'NCCL/RCCL, custom all-reduce, TensorRT-LLM/MoRI expert-parallel all-to-all'),
    (20, 'optimizer',     'full', '(multi_tensor_apply|fused_?adam|adamw?_|fused_?sgd|sgd_?kernel|lamb_|_foreach_)', 'PyTorch foreach/fused optimizers, apex'),
    (30, 'nms/sort',      'full', '(nms|radix_?sort|sort_?kernel|segmented_?sort|devicesort|bitonic|topk|mbtopk|gathertopk)', 'torchvision NMS, CUB sort, PyTorch topk'),
    (33, 'attention',     'full', '(fmha|flash_?fwd|flash_?bwd|flash_?attn|flashattn|flash_?decod|attention|_attn_|(^|[^a-z0-9])attn_(fwd|bwd)|sdpa|(^|[^a-z0-9_])kernel_mha([^a-z0-9_]|$)|xqa|mha_|mla_|batchprefill|batchdecode|paged_?kv|ragged_?kv)',
        'FlashAttention, xFormers/CUTLASS fmha, cuDNN SDPA, TensorRT-LLM XQA kernel_mha, FlashInfer/vLLM paged attention, Triton attention (attn_fwd/_attn_fwd/_attn_bwd: triton-lang tutorials/06-fused-attention.py, ROCm aiter/vLLM Triton FA)'),
    -- unambiguous GEMM/convolution engines first: their template arguments mention layouts and indexing
    (35, 'gemm',          'full', '(gemm|xmma|nvjet|wgmma|cutlass|fprop|dgrad|wgrad|implicit_?convolve|winograd|scudnn|cijk_)', 'cuBLAS/cuBLASLt, CUTLASS, cuDNN engines, rocBLAS Tensile'),
    (40, 'norm',          'full', '(batch_?norm|layer_?norm|group_?norm|instance_?norm|rms_?norm|bn_fw|bn_bw|welford|normalization|gammabetabackward|rowwisemoments)', 'PyTorch and cuDNN normalization (layer/group norm backward: GammaBetaBackwardCUDAKernel, RowwiseMomentsCUDAKernel in aten/src/ATen/native/cuda/layer_norm_kernel.cu, group_norm_kernel.cu)'),
    (50, 'layout',        'full', '(nchwtonhwc|nhwctonchw|transpose|permute|catarray|cat_?kernel|direct_copy|copy_?kernel|_copy|copy_|im2col|col2im|vol2col|im[23]d2col|col2im[23]d|reflection_?pad|replication_?pad|constant_?pad|pad_?kernel|converttensor|unfold|index_?select|indexselect|index_?put|gather_?kernel|scatter_?kernel|scatter_gather)', 'PyTorch copies, cat, pad, gather/scatter, index ops; cuDNN layout helpers; MIOpen Im2d2Col_v2/Col2Im2d (src/kernels/MIOpenIm2d2Col.cpp)'),
    (60, 'gemm',          'full', '(gemm|gemv|conv|cutlass|xmma|nvjet|wgmma|gmma|hmma|h884|s884|h1688|s1688|i8816|16816|161616|fprop|dgrad|wgrad|winograd|fft|implicit_?convolve|cask_cudnn|scudnn|cudnn|cublas|cijk_|bmm|matmul|dot_?kernel|splitkreduce|wvsplitk)', 'GEMM/convolution names of every vendor library (Triton matmul_ogs; vLLM ROCm skinny GEMMs wvSplitK*, csrc/rocm/skinny_gemms.cu)'),
    -- matrix kernels whose names say no gemm (the Tensor Core rules name them too, sql/tensorcore_rules.sql):
    -- AMD matrix-core tokens (MFMA, composable_kernel XDL) and Blackwell tcgen05 kernels
    (62, 'gemm',          'full', '(mfma|xdl|tcgen05)', 'AMD composable_kernel/MFMA, Blackwell tcgen05'),
    (70, 'reduce',        'full', '(reduce|pool|softmax|argmax|argmin|cross_?entropy|nll_?loss|cumsum|cumprod|_sum_|_mean_|norm_?kernel|devicescan)', 'PyTorch reductions, pooling, softmax, losses; CUB DeviceScan (prefix sums)'),
    (80, 'elementwise',   'full', '(elementwise|vectorized|unrolled|pointwise|functor|activation|relu|silu|sigmoid|gelu|tanh|_add|_mul|_div|fill|where|clamp|dropout|threshold|distribution|triton_poi|triton_)', 'PyTorch TensorIterator kernels, Triton pointwise'),
    -- MIOpen's tensor-op kernels: elementwise set/scale/copy/add over (sub)tensors, which no "gemm" rule names
    -- (ROCm/MIOpen src/kernels/MIOpenSubTensorOpWithScalarKernel.cl, MIOpenSubTensorOpWithCastTensorKernel.cl,
    -- MIOpenTensorKernels.cl: SubTensorOpWithScalar1d…5d, SubTensorOpWithCastTensor1d…, Op1dTensorGeneric,
    -- Op2dTensorGeneric, OpTensorFwdBias…)
    (82, 'elementwise',   'full', '(subtensorop|op[1-5]dtensor|optensor)', 'MIOpen tensor ops');

-- kernel_name_stripped(name): the kernel name without a leading `void ` and without the namespaces of its
-- own function (fbgemm_gpu::, vllm::, at::native::(anonymous namespace)::), unless they name a GEMM
-- library (cutlass::, cute::, cudnn::, cublas::: there the namespace says what the kernel is). Template
-- arguments are kept: they name the engine of a generic `Kernel<…>`.
-- fbgemm_gpu:: is dropped wherever it stands: in a template argument (the lambda of a
-- vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu…>) its "gemm" would otherwise make a GEMM.
CREATE OR REPLACE TEMP MACRO kernel_name_stripped(kernel_name) AS
    CASE WHEN regexp_matches(kernel_name, '^\s*(void\s+)?(cutlass|cute|cudnn|cublas(lt)?)::') THEN kernel_name
         ELSE regexp_replace(regexp_replace(kernel_name, '^\s*(void\s+)?((\(anonymous namespace\)|[A-Za-z_][A-Za-z0-9_]*)::)*', ''),
                             'fbgemm_gpu::', '', 'g') END;

-- kernel_own_name(name): the kernel's own function name: the identifier after all its namespaces, up to
-- its template arguments or parameters; none for a mangled name (its "own name" would be the whole symbol).
CREATE OR REPLACE TEMP MACRO kernel_own_name(kernel_name) AS
    CASE WHEN regexp_matches(kernel_name, '^\s*_Z') THEN ''
         ELSE regexp_extract(regexp_replace(kernel_name, '^\s*(void\s+)?((\(anonymous namespace\)|[A-Za-z_][A-Za-z0-9_]*)::)*', ''),
                             '^\s*([^<(\s]*)', 1) END;

-- kernel_category(activity, name): the category of one device activity. memcpy and memset are their
-- own category; a kernel takes the first rule that matches its name (own, stripped or as recorded), else 'other'.
CREATE OR REPLACE TEMP MACRO kernel_category(activity, kernel_name) AS
    CASE WHEN activity <> 'kernel' THEN activity
         ELSE coalesce((SELECT r.category FROM kernel_category_rules r
                        WHERE regexp_matches(CASE r.match WHEN 'own' THEN kernel_own_name(kernel_name)
                                                          WHEN 'name' THEN kernel_name
                                                          ELSE kernel_name_stripped(kernel_name) END,
                                             '(?i)' || r.pattern)
                        ORDER BY r.rule_order LIMIT 1), 'other') END;

-- kernel_category_shares: the categories whose kernel time each share metric counts (a category not
-- listed counts in no share). memory_bound_pct: the kernels that stream memory rather than compute,
-- embedding lookups among them. gemm_pct: GEMM and convolution kernels only; attention kernels (their own
-- category since issue 24) are in no share but tensorcore_pct, so gemm_pct + attention share the matrix work.
CREATE OR REPLACE TEMP TABLE kernel_category_shares (
    category VARCHAR,  -- a category of kernel_category_rules
    share    VARCHAR   -- the metric (sql/metrics.sql, `libreyolo profile get`) whose share it counts in
);
INSERT INTO kernel_category_shares VALUES
    ('gemm', 'gemm_pct'),
    ('elementwise', 'memory_bound_pct'), ('layout', 'memory_bound_pct'), ('norm', 'memory_bound_pct'),
    ('reduce', 'memory_bound_pct'), ('embedding', 'memory_bound_pct'),
    ('communication', 'communication_pct');
