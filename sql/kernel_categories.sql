-- kernel_categories.sql — the ordered rule table that names a device activity's category.
--
-- Answers: which category does a GPU kernel belong to? The first rule (lowest rule_order) whose
-- case-insensitive regular expression matches the kernel name wins; a kernel no rule matches is
-- 'other'. memcpy and memset activities are categorised by their kind, not by these rules.
-- Binds: nothing. Creates: kernel_category_rules, kernel_category(activity, name) (the lookup, used by
-- sql/ingest.sql and the built-in converter alike) and kernel_category_shares (which categories make up
-- each share of kernel time a profile reports, read by sql/kernel_shares.sql).
--
-- Order matters: communication before everything (nccl kernels contain "reduce"), norm and layout
-- before gemm (cuDNN's nchwToNhwc helpers live beside its convolutions), gemm before reduce
-- (cuBLAS splitKreduce is part of a GEMM).
CREATE OR REPLACE TEMP TABLE kernel_category_rules (
    rule_order INTEGER,  -- evaluation order, lowest first
    category   VARCHAR,  -- the category a match assigns
    pattern    VARCHAR   -- RE2 regular expression over the kernel name, case-insensitive
);
INSERT INTO kernel_category_rules VALUES
    (10, 'communication', '(nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv)'),
    (20, 'optimizer',     '(multi_tensor_apply|fused_?adam|adamw?_|fused_?sgd|sgd_?kernel|lamb_|_foreach_)'),
    (30, 'nms/sort',      '(nms|radix_?sort|sort_?kernel|segmented_?sort|devicesort|bitonic|topk|mbtopk|gathertopk)'),
    -- unambiguous GEMM/convolution engines first: their template arguments mention layouts and indexing
    (35, 'gemm',          '(gemm|xmma|nvjet|wgmma|cutlass|fprop|dgrad|wgrad|implicit_?convolve|winograd|scudnn|cijk_|fmha|flash_)'),
    (40, 'norm',          '(batch_?norm|layer_?norm|group_?norm|instance_?norm|rms_?norm|bn_fw|bn_bw|welford|cudnn::bn_|normalization)'),
    (50, 'layout',        '(nchwtonhwc|nhwctonchw|transpose|permute|catarray|cat_?kernel|direct_copy|copy_?kernel|_copy|copy_|im2col|col2im|vol2col|reflection_?pad|replication_?pad|constant_?pad|pad_?kernel|converttensor|unfold|index_?select|indexselect|index_?put|gather_?kernel|scatter_?kernel|scatter_gather)'),
    (60, 'gemm',          '(gemm|gemv|conv|cutlass|xmma|nvjet|wgmma|gmma|hmma|h884|s884|h1688|s1688|i8816|16816|161616|fprop|dgrad|wgrad|winograd|fft|implicit_?convolve|cask_cudnn|scudnn|cudnn|cublas|cijk_|fmha|flash|attention|bmm|matmul|dot_?kernel|splitkreduce)'),
    -- matrix kernels whose names say neither gemm nor attention (the Tensor Core rules name them too,
    -- sql/tensorcore_rules.sql): TensorRT-LLM's XQA decode attention `kernel_mha`, AMD matrix-core
    -- tokens (MFMA, composable_kernel XDL) and Blackwell tcgen05 kernels
    (62, 'gemm',          '((^|[^a-z0-9_])kernel_mha([^a-z0-9_]|$)|mfma|xdl|tcgen05)'),
    (70, 'reduce',        '(reduce|pool|softmax|argmax|argmin|cross_?entropy|nll_?loss|cumsum|cumprod|_sum_|_mean_|norm_?kernel)'),
    (80, 'elementwise',   '(elementwise|vectorized|unrolled|pointwise|functor|activation|relu|silu|sigmoid|gelu|tanh|_add|_mul|_div|fill|where|clamp|dropout|threshold|distribution|triton_poi|triton_)');

-- kernel_category(activity, name): the category of one device activity. memcpy and memset are their
-- own category; a kernel takes the first rule that matches its name, else 'other'.
CREATE OR REPLACE TEMP MACRO kernel_category(activity, kernel_name) AS
    CASE WHEN activity <> 'kernel' THEN activity
         ELSE coalesce((SELECT r.category FROM kernel_category_rules r
                        WHERE regexp_matches(kernel_name, '(?i)' || r.pattern)
                        ORDER BY r.rule_order LIMIT 1), 'other') END;

-- kernel_category_shares: the categories whose kernel time each share metric counts (a category not
-- listed counts in no share). memory_bound_pct: the kernels that stream memory rather than compute.
CREATE OR REPLACE TEMP TABLE kernel_category_shares (
    category VARCHAR,  -- a category of kernel_category_rules
    share    VARCHAR   -- the metric (sql/metrics.sql, `libreyolo profile get`) whose share it counts in
);
INSERT INTO kernel_category_shares VALUES
    ('gemm', 'gemm_pct'),
    ('elementwise', 'memory_bound_pct'), ('layout', 'memory_bound_pct'), ('norm', 'memory_bound_pct'),
    ('reduce', 'memory_bound_pct'),
    ('communication', 'communication_pct');
