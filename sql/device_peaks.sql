-- device_peaks.sql — the roof: each device's peak compute per data type and its memory bandwidth,
-- every number with the vendor document it comes from.
--
-- Answers nothing by itself: it builds device_models (which device a trace's deviceProperties name)
-- and device_peaks (its peaks), which sql/roofline.sql joins. Binds: nothing.
-- Figures are dense (no structured sparsity): where a datasheet prints only the with-sparsity
-- figure, it is halved (the source says so). A device absent here gets NULL peaks, with the reason.
-- AMD MI250/MI250X: the profiler sees each of the package's two GCDs as one device, so the figures
-- are half the package's; on AMD the fp32 roof is the matrix-core rate (what FP32 GEMMs reach).

-- device_models: how a device is recognised. The first rule (by priority) whose name pattern
-- matches and whose memory (GiB) and multiprocessor count fit, names the device. A model name stands
-- between non-alphanumerics (GH200 is not an H200, GB200 not a B200, A800 not an A100); a variant that
-- shares its family's name (H100 NVL/PCIe, GH200's two memories, H20-3e) comes before, or is kept out by,
-- its memory. A device no rule names gets no roof (sql/roofline.sql says why), never a neighbour's.
-- tests/test_device_roofs.py holds, per rule, the names the drivers report for it and the look-alikes.
CREATE OR REPLACE TEMP TABLE device_models AS
SELECT * FROM (VALUES
    -- (priority, model, name regex, min memory GiB, max memory GiB, multiprocessors (NULL: any),
    --  HBM/GDDR bandwidth TB/s, source of the bandwidth, on-chip last-level cache MiB, its source (NULL: no
    --  published figure here). Data a previous op left in that cache is read without touching DRAM: the
    --  roofline's above-roof cause, which sql/roofline_models.sql roofline_device_caches held until now)
    (10, 'V100S PCIe',     '(?i)(^|[^a-z0-9])V100S([^a-z0-9]|$)', 0, 1e9, NULL, 1.134, 'NVIDIA V100S datasheet: 1134 GB/s HBM2', 6, 'NVIDIA Tesla V100 GPU architecture whitepaper: 6,144 KB L2'),
    (11, 'V100 SXM2',      '(?i)(^|[^a-z0-9])V100-(SXM2|DGXS)', 0, 1e9, NULL, 0.900, 'NVIDIA Tesla V100 GPU datasheet (V100 SXM2; DGX Station uses SXM2 parts): 900 GB/s HBM2', 6, 'NVIDIA Tesla V100 GPU architecture whitepaper: 6,144 KB L2'),
    (12, 'V100 PCIe',      '(?i)(^|[^a-z0-9])V100([^a-z0-9]|$)', 0, 1e9, NULL, 0.900, 'NVIDIA Tesla V100 GPU datasheet (V100 PCIe): 900 GB/s HBM2', 6, 'NVIDIA Tesla V100 GPU architecture whitepaper: 6,144 KB L2'),
    (20, 'A100 PCIe 80GB', '(?i)(^|[^a-z0-9])A100([^a-z0-9].*)?PCIE', 48, 1e9, NULL, 1.935, 'NVIDIA A100 Tensor Core GPU datasheet (A100 80GB PCIe): 1,935 GB/s HBM2e', 40, 'NVIDIA A100 Tensor Core GPU architecture whitepaper: 40 MB L2'),
    (21, 'A100 SXM4 80GB', '(?i)(^|[^a-z0-9])A100([^a-z0-9]|$)', 48, 1e9, NULL, 2.039, 'NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM): 2,039 GB/s HBM2e', 40, 'NVIDIA A100 Tensor Core GPU architecture whitepaper: 40 MB L2'),
    (22, 'A100 40GB',      '(?i)(^|[^a-z0-9])A100([^a-z0-9]|$)', 0, 48, NULL, 1.555, 'NVIDIA A100 Tensor Core GPU datasheet (A100 40GB PCIe and SXM): 1,555 GB/s HBM2', 40, 'NVIDIA A100 Tensor Core GPU architecture whitepaper: 40 MB L2'),
    (30, 'H100 NVL',       '(?i)(^|[^a-z0-9])H100 NVL',     0, 1e9, NULL, 3.900, 'NVIDIA H100 Tensor Core GPU datasheet (H100 NVL): 3.9 TB/s HBM3', 50, 'NVIDIA H100 Tensor Core GPU architecture whitepaper: 50 MB L2'),
    (31, 'H100 PCIe',      '(?i)(^|[^a-z0-9])H100([^a-z0-9].*)?PCIE', 0, 1e9, NULL, 2.000, 'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe): 2 TB/s HBM2e', 50, 'NVIDIA H100 Tensor Core GPU architecture whitepaper: 50 MB L2'),
    (32, 'H100 SXM',       '(?i)(^|[^a-z0-9])H100([^a-z0-9]|$)', 0, 1e9, NULL, 3.350, 'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM): 3.35 TB/s HBM3', 50, 'NVIDIA H100 Tensor Core GPU architecture whitepaper: 50 MB L2'),
    -- H20: the Hopper part with 96 GB HBM3; the H20-3e (141 GB HBM3e) has no published figures: kept out by its memory
    (35, 'H20',            '(?i)(^|[^a-z0-9])H20([^a-z0-9]|$)', 0, 120, NULL, 4.000, 'NVIDIA H20 product brief (as published by NVIDIA partners): 4.0 TB/s HBM3, 96 GB', NULL, NULL),
    (40, 'H200 NVL',       '(?i)(^|[^a-z0-9])H200 NVL',     0, 1e9, NULL, 4.800, 'NVIDIA H200 Tensor Core GPU datasheet (H200 NVL): 4.8 TB/s HBM3e', 50, 'NVIDIA H100 Tensor Core GPU architecture whitepaper: 50 MB L2 (the H200 is the same GH100 die)'),
    (41, 'H200 SXM',       '(?i)(^|[^a-z0-9])H200([^a-z0-9]|$)', 0, 1e9, NULL, 4.800, 'NVIDIA H200 Tensor Core GPU datasheet (H200 SXM): 4.8 TB/s HBM3e', 50, 'NVIDIA H100 Tensor Core GPU architecture whitepaper: 50 MB L2 (the H200 is the same GH100 die)'),
    -- GH200: the driver names both memories GH200 ("NVIDIA GH200 480GB" holds 96 GB HBM3; the 144 GB part HBM3e)
    (45, 'GH200 96GB',     '(?i)(^|[^a-z0-9])GH200([^a-z0-9]|$)', 0, 120, NULL, 4.000, 'NVIDIA GH200 Grace Hopper Superchip datasheet: 96 GB HBM3 at 4 TB/s', 50, 'NVIDIA H100 Tensor Core GPU architecture whitepaper: 50 MB L2 (GH200''s GPU is the same GH100 die)'),
    (46, 'GH200 144GB',    '(?i)(^|[^a-z0-9])GH200([^a-z0-9]|$)', 120, 1e9, NULL, 4.900, 'NVIDIA GH200 Grace Hopper Superchip datasheet: 144 GB HBM3e at 4.9 TB/s', 50, 'NVIDIA H100 Tensor Core GPU architecture whitepaper: 50 MB L2 (GH200''s GPU is the same GH100 die)'),
    (50, 'B200',           '(?i)(^|[^a-z0-9])B200([^a-z0-9]|$)', 0, 1e9, NULL, 8.000, 'NVIDIA DGX B200 datasheet: 64 TB/s HBM3e for 8 GPUs, 8 TB/s each', NULL, NULL),
    (51, 'GB200',          '(?i)(^|[^a-z0-9])GB200([^a-z0-9]|$)', 0, 1e9, NULL, 8.000, 'NVIDIA GB200 NVL72 datasheet: 576 TB/s HBM3e for 72 GPUs, 8 TB/s each', NULL, NULL),
    (52, 'B300',           '(?i)(^|[^a-z0-9])B300([^a-z0-9]|$)', 0, 1e9, NULL, 8.000, 'NVIDIA Blackwell Ultra (HGX B300) datasheet: 288 GB HBM3e at 8 TB/s per GPU', NULL, NULL),
    (60, 'L40S',           '(?i)(^|[^a-z0-9])L40S([^a-z0-9]|$)', 0, 1e9, NULL, 0.864, 'NVIDIA L40S GPU datasheet: 864 GB/s GDDR6', 96, 'NVIDIA Ada GPU architecture whitepaper (AD102): 96 MB L2'),
    (61, 'L4',             '(?i)(^|[^a-z0-9])L4([^a-z0-9]|$)', 0, 1e9, NULL, 0.300, 'NVIDIA L4 Tensor Core GPU datasheet: 300 GB/s GDDR6', 48, 'NVIDIA Ada GPU architecture whitepaper (AD104): 48 MB L2'),
    (70, 'MI325X',         '(?i)(^|[^a-z0-9])MI325X([^a-z0-9]|$)', 0, 1e9, NULL, 6.000, 'AMD Instinct MI325X accelerator datasheet: 6 TB/s HBM3E', 256, 'AMD CDNA 3 architecture whitepaper: 256 MB AMD Infinity Cache'),
    (71, 'MI325X',         '(?i)(AMD|gfx942)',            200, 1e9,  304, 6.000, 'AMD Instinct MI325X accelerator datasheet: 6 TB/s HBM3E', 256, 'AMD CDNA 3 architecture whitepaper: 256 MB AMD Infinity Cache'),
    (72, 'MI300X',         '(?i)(^|[^a-z0-9])MI300X([^a-z0-9]|$)', 0, 1e9, NULL, 5.300, 'AMD Instinct MI300X accelerator datasheet: 5.3 TB/s HBM3', 256, 'AMD CDNA 3 architecture whitepaper: 256 MB AMD Infinity Cache'),
    (73, 'MI300X',         '(?i)(AMD|gfx942)',              0, 200,  304, 5.300, 'AMD Instinct MI300X accelerator datasheet: 5.3 TB/s HBM3', 256, 'AMD CDNA 3 architecture whitepaper: 256 MB AMD Infinity Cache'),
    -- MI355X by name only: the MI350X has the same gfx950, 256 CUs and memory at a lower clock
    (75, 'MI355X',         '(?i)(^|[^a-z0-9])MI355X([^a-z0-9]|$)', 0, 1e9, NULL, 8.000, 'AMD Instinct MI355X accelerator datasheet: 288 GB HBM3E at 8 TB/s', NULL, NULL),
    (80, 'MI250X GCD',     '(?i)(^|[^a-z0-9])MI250X',       0, 1e9, NULL, 1.638, 'AMD Instinct MI250X accelerator datasheet: 3.2768 TB/s HBM2e per package, half per GCD', 8, 'AMD CDNA 2 architecture whitepaper: 8 MB L2 per GCD'),
    (81, 'MI250X GCD',     '(?i)(AMD|gfx90a)',              0, 1e9,  110, 1.638, 'AMD Instinct MI250X accelerator datasheet: 3.2768 TB/s HBM2e per package, half per GCD', 8, 'AMD CDNA 2 architecture whitepaper: 8 MB L2 per GCD'),
    (82, 'MI250 GCD',      '(?i)(^|[^a-z0-9])MI250([^a-z0-9]|$)', 0, 1e9, NULL, 1.638, 'AMD Instinct MI250 accelerator datasheet: 3.2768 TB/s HBM2e per package, half per GCD', 8, 'AMD CDNA 2 architecture whitepaper: 8 MB L2 per GCD'),
    (83, 'MI250 GCD',      '(?i)(AMD|gfx90a)',              0, 1e9,  104, 1.638, 'AMD Instinct MI250 accelerator datasheet: 3.2768 TB/s HBM2e per package, half per GCD', 8, 'AMD CDNA 2 architecture whitepaper: 8 MB L2 per GCD')
) AS t(priority, model, name_pattern, min_mem_gib, max_mem_gib, num_sms, tb_per_s, bandwidth_source, cache_mib, cache_source);

-- device_model_of(name, total MiB, multiprocessors): the model of one device as its deviceProperties give it,
-- the first device_models rule that fits; NULL when none does.
CREATE OR REPLACE TEMP MACRO device_model_of(dev_name, dev_total_mb, dev_sms) AS (
    SELECT m.model FROM device_models m
    WHERE regexp_matches(coalesce(dev_name, ''), m.name_pattern)
      AND coalesce(dev_total_mb, 0) / 1024 >= m.min_mem_gib AND coalesce(dev_total_mb, 0) / 1024 < m.max_mem_gib
      AND (m.num_sms IS NULL OR m.num_sms = dev_sms)
    ORDER BY m.priority LIMIT 1
);

-- device_peaks: dense peak compute per model and peak class, TFLOP/s. Peak classes: fp64, fp32
-- (NVIDIA: CUDA cores, what FP32 runs at without Tensor Cores), tf32 (FP32 ops whose kernels use
-- Tensor Cores), bf16, fp16, fp8, fp4. A class a device lacks has no row.
CREATE OR REPLACE TEMP TABLE device_peaks AS
WITH figures(model, peak_class, tflops, source) AS (VALUES
    ('V100 SXM2', 'fp64', 7.8, 'NVIDIA Tesla V100 GPU datasheet (V100 SXM2)'),
    ('V100 SXM2', 'fp32', 15.7, 'NVIDIA Tesla V100 GPU datasheet (V100 SXM2)'),
    ('V100 SXM2', 'fp16', 125.0, 'NVIDIA Tesla V100 GPU datasheet (V100 SXM2, Tensor Performance)'),
    ('V100 PCIe', 'fp64', 7.0, 'NVIDIA Tesla V100 GPU datasheet (V100 PCIe)'),
    ('V100 PCIe', 'fp32', 14.0, 'NVIDIA Tesla V100 GPU datasheet (V100 PCIe)'),
    ('V100 PCIe', 'fp16', 112.0, 'NVIDIA Tesla V100 GPU datasheet (V100 PCIe, Tensor Performance)'),
    ('V100S PCIe', 'fp64', 8.2, 'NVIDIA V100S datasheet'),
    ('V100S PCIe', 'fp32', 16.4, 'NVIDIA V100S datasheet'),
    ('V100S PCIe', 'fp16', 130.0, 'NVIDIA V100S datasheet (Tensor Performance)'),
    ('A100', 'fp64', 9.7, 'NVIDIA A100 Tensor Core GPU datasheet'),
    ('A100', 'fp32', 19.5, 'NVIDIA A100 Tensor Core GPU datasheet'),
    ('A100', 'tf32', 156.0, 'NVIDIA A100 Tensor Core GPU datasheet (TF32 Tensor Core, dense)'),
    ('A100', 'bf16', 312.0, 'NVIDIA A100 Tensor Core GPU datasheet (BFLOAT16 Tensor Core, dense)'),
    ('A100', 'fp16', 312.0, 'NVIDIA A100 Tensor Core GPU datasheet (FP16 Tensor Core, dense)'),
    ('H100 SXM', 'fp64', 34.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM)'),
    ('H100 SXM', 'fp32', 67.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM)'),
    ('H100 SXM', 'tf32', 494.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM: 989 TFLOPS with sparsity, halved)'),
    ('H100 SXM', 'bf16', 989.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM: 1,979 TFLOPS with sparsity, halved)'),
    ('H100 SXM', 'fp16', 989.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM: 1,979 TFLOPS with sparsity, halved)'),
    ('H100 SXM', 'fp8', 1979.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM: 3,958 TFLOPS with sparsity, halved)'),
    ('H100 PCIe', 'fp64', 26.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe)'),
    ('H100 PCIe', 'fp32', 51.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe)'),
    ('H100 PCIe', 'tf32', 378.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe: 756 TFLOPS with sparsity, halved)'),
    ('H100 PCIe', 'bf16', 756.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe: 1,513 TFLOPS with sparsity, halved)'),
    ('H100 PCIe', 'fp16', 756.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe: 1,513 TFLOPS with sparsity, halved)'),
    ('H100 PCIe', 'fp8', 1513.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe: 3,026 TFLOPS with sparsity, halved)'),
    ('H100 NVL', 'fp64', 30.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 NVL)'),
    ('H100 NVL', 'fp32', 60.0, 'NVIDIA H100 Tensor Core GPU datasheet (H100 NVL)'),
    ('H100 NVL', 'tf32', 417.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 NVL: 835 TFLOPS with sparsity, halved)'),
    ('H100 NVL', 'bf16', 835.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 NVL: 1,671 TFLOPS with sparsity, halved)'),
    ('H100 NVL', 'fp16', 835.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 NVL: 1,671 TFLOPS with sparsity, halved)'),
    ('H100 NVL', 'fp8', 1670.5, 'NVIDIA H100 Tensor Core GPU datasheet (H100 NVL: 3,341 TFLOPS with sparsity, halved)'),
    ('H200 SXM', 'fp64', 34.0, 'NVIDIA H200 Tensor Core GPU datasheet (H200 SXM)'),
    ('H200 SXM', 'fp32', 67.0, 'NVIDIA H200 Tensor Core GPU datasheet (H200 SXM)'),
    ('H200 SXM', 'tf32', 494.5, 'NVIDIA H200 Tensor Core GPU datasheet (H200 SXM: 989 TFLOPS with sparsity, halved)'),
    ('H200 SXM', 'bf16', 989.5, 'NVIDIA H200 Tensor Core GPU datasheet (H200 SXM: 1,979 TFLOPS with sparsity, halved)'),
    ('H200 SXM', 'fp16', 989.5, 'NVIDIA H200 Tensor Core GPU datasheet (H200 SXM: 1,979 TFLOPS with sparsity, halved)'),
    ('H200 SXM', 'fp8', 1979.0, 'NVIDIA H200 Tensor Core GPU datasheet (H200 SXM: 3,958 TFLOPS with sparsity, halved)'),
    ('H200 NVL', 'fp64', 30.0, 'NVIDIA H200 Tensor Core GPU datasheet (H200 NVL)'),
    ('H200 NVL', 'fp32', 60.0, 'NVIDIA H200 Tensor Core GPU datasheet (H200 NVL)'),
    ('H200 NVL', 'tf32', 417.5, 'NVIDIA H200 Tensor Core GPU datasheet (H200 NVL: 835 TFLOPS with sparsity, halved)'),
    ('H200 NVL', 'bf16', 835.5, 'NVIDIA H200 Tensor Core GPU datasheet (H200 NVL: 1,671 TFLOPS with sparsity, halved)'),
    ('H200 NVL', 'fp16', 835.5, 'NVIDIA H200 Tensor Core GPU datasheet (H200 NVL: 1,671 TFLOPS with sparsity, halved)'),
    ('H200 NVL', 'fp8', 1670.5, 'NVIDIA H200 Tensor Core GPU datasheet (H200 NVL: 3,341 TFLOPS with sparsity, halved)'),
    ('B200', 'fp64', 37.0, 'NVIDIA HGX B200 datasheet (296 TFLOPS FP64 for 8 GPUs, one eighth)'),
    ('B200', 'fp32', 75.0, 'NVIDIA HGX B200 datasheet (600 TFLOPS FP32 for 8 GPUs, one eighth)'),
    ('B200', 'tf32', 1125.0, 'NVIDIA HGX B200 datasheet (18 PFLOPS TF32 with sparsity for 8 GPUs, one eighth, halved)'),
    ('B200', 'bf16', 2250.0, 'NVIDIA HGX B200 datasheet (36 PFLOPS FP16/BF16 with sparsity for 8 GPUs, one eighth, halved)'),
    ('B200', 'fp16', 2250.0, 'NVIDIA HGX B200 datasheet (36 PFLOPS FP16/BF16 with sparsity for 8 GPUs, one eighth, halved)'),
    ('B200', 'fp8', 4500.0, 'NVIDIA HGX B200 datasheet (72 PFLOPS FP8 with sparsity for 8 GPUs, one eighth, halved)'),
    ('B200', 'fp4', 9000.0, 'NVIDIA HGX B200 datasheet (144 PFLOPS FP4 with sparsity for 8 GPUs, one eighth, halved)'),
    ('L4', 'fp32', 30.3, 'NVIDIA L4 Tensor Core GPU datasheet'),
    ('L4', 'tf32', 60.0, 'NVIDIA L4 Tensor Core GPU datasheet (120 TFLOPS with sparsity, halved)'),
    ('L4', 'bf16', 121.0, 'NVIDIA L4 Tensor Core GPU datasheet (242 TFLOPS with sparsity, halved)'),
    ('L4', 'fp16', 121.0, 'NVIDIA L4 Tensor Core GPU datasheet (242 TFLOPS with sparsity, halved)'),
    ('L4', 'fp8', 242.5, 'NVIDIA L4 Tensor Core GPU datasheet (485 TFLOPS with sparsity, halved)'),
    ('L40S', 'fp32', 91.6, 'NVIDIA L40S GPU datasheet'),
    ('L40S', 'tf32', 183.0, 'NVIDIA L40S GPU datasheet (366 TFLOPS with sparsity, halved)'),
    ('L40S', 'bf16', 366.5, 'NVIDIA L40S GPU datasheet (733 TFLOPS with sparsity, halved)'),
    ('L40S', 'fp16', 366.5, 'NVIDIA L40S GPU datasheet (733 TFLOPS with sparsity, halved)'),
    ('L40S', 'fp8', 733.0, 'NVIDIA L40S GPU datasheet (1,466 TFLOPS with sparsity, halved)'),
    ('MI250 GCD', 'fp64', 45.25, 'AMD Instinct MI250 accelerator datasheet (FP64 matrix 90.5 TFLOPS per package, half per GCD)'),
    ('MI250 GCD', 'fp32', 45.25, 'AMD Instinct MI250 accelerator datasheet (FP32 matrix 90.5 TFLOPS per package, half per GCD)'),
    ('MI250 GCD', 'bf16', 181.05, 'AMD Instinct MI250 accelerator datasheet (BF16 362.1 TFLOPS per package, half per GCD)'),
    ('MI250 GCD', 'fp16', 181.05, 'AMD Instinct MI250 accelerator datasheet (FP16 362.1 TFLOPS per package, half per GCD)'),
    ('MI250X GCD', 'fp64', 47.85, 'AMD Instinct MI250X accelerator datasheet (FP64 matrix 95.7 TFLOPS per package, half per GCD)'),
    ('MI250X GCD', 'fp32', 47.85, 'AMD Instinct MI250X accelerator datasheet (FP32 matrix 95.7 TFLOPS per package, half per GCD)'),
    ('MI250X GCD', 'bf16', 191.5, 'AMD Instinct MI250X accelerator datasheet (BF16 383 TFLOPS per package, half per GCD)'),
    ('MI250X GCD', 'fp16', 191.5, 'AMD Instinct MI250X accelerator datasheet (FP16 383 TFLOPS per package, half per GCD)'),
    ('MI300X', 'fp64', 163.4, 'AMD Instinct MI300X accelerator datasheet (FP64 matrix)'),
    ('MI300X', 'fp32', 163.4, 'AMD Instinct MI300X accelerator datasheet (FP32 matrix)'),
    ('MI300X', 'tf32', 653.7, 'AMD Instinct MI300X accelerator datasheet (TF32 matrix, dense)'),
    ('MI300X', 'bf16', 1307.4, 'AMD Instinct MI300X accelerator datasheet (BF16, dense)'),
    ('MI300X', 'fp16', 1307.4, 'AMD Instinct MI300X accelerator datasheet (FP16, dense)'),
    ('MI300X', 'fp8', 2614.9, 'AMD Instinct MI300X accelerator datasheet (FP8, dense)'),
    ('MI325X', 'fp64', 163.4, 'AMD Instinct MI325X accelerator datasheet (FP64 matrix)'),
    ('MI325X', 'fp32', 163.4, 'AMD Instinct MI325X accelerator datasheet (FP32 matrix)'),
    ('MI325X', 'tf32', 653.7, 'AMD Instinct MI325X accelerator datasheet (TF32 matrix, dense)'),
    ('MI325X', 'bf16', 1307.4, 'AMD Instinct MI325X accelerator datasheet (BF16, dense)'),
    ('MI325X', 'fp16', 1307.4, 'AMD Instinct MI325X accelerator datasheet (FP16, dense)'),
    ('MI325X', 'fp8', 2614.9, 'AMD Instinct MI325X accelerator datasheet (FP8, dense)'),
    -- GH200's GPU is an H100 with other memory: its compute sheet is the H100 SXM's
    ('GH200', 'fp64', 34.0, 'NVIDIA GH200 Grace Hopper Superchip datasheet'),
    ('GH200', 'fp32', 67.0, 'NVIDIA GH200 Grace Hopper Superchip datasheet'),
    ('GH200', 'tf32', 494.5, 'NVIDIA GH200 Grace Hopper Superchip datasheet (989 TFLOPS with sparsity, halved)'),
    ('GH200', 'bf16', 989.5, 'NVIDIA GH200 Grace Hopper Superchip datasheet (1,979 TFLOPS with sparsity, halved)'),
    ('GH200', 'fp16', 989.5, 'NVIDIA GH200 Grace Hopper Superchip datasheet (1,979 TFLOPS with sparsity, halved)'),
    ('GH200', 'fp8', 1979.0, 'NVIDIA GH200 Grace Hopper Superchip datasheet (3,958 TFLOPS with sparsity, halved)'),
    -- GB200: the NVL72 rack's figures over its 72 GPUs (the sheet prints no FP32 figure: no fp32 row)
    ('GB200', 'fp64', 45.0, 'NVIDIA GB200 NVL72 datasheet (3,240 TFLOPS FP64 for 72 GPUs, one seventy-second)'),
    ('GB200', 'tf32', 1250.0, 'NVIDIA GB200 NVL72 datasheet (180 PFLOPS TF32 with sparsity for 72 GPUs, per GPU, halved)'),
    ('GB200', 'bf16', 2500.0, 'NVIDIA GB200 NVL72 datasheet (360 PFLOPS FP16/BF16 with sparsity for 72 GPUs, per GPU, halved)'),
    ('GB200', 'fp16', 2500.0, 'NVIDIA GB200 NVL72 datasheet (360 PFLOPS FP16/BF16 with sparsity for 72 GPUs, per GPU, halved)'),
    ('GB200', 'fp8', 5000.0, 'NVIDIA GB200 NVL72 datasheet (720 PFLOPS FP8 with sparsity for 72 GPUs, per GPU, halved)'),
    ('GB200', 'fp4', 10000.0, 'NVIDIA GB200 NVL72 datasheet (1,440 PFLOPS FP4 with sparsity for 72 GPUs, per GPU, halved)'),
    -- B300: the HGX B300 sheet's figures over its 8 GPUs; its dense FP4 figure is quoted differently by
    -- different printings, so no fp4 row rather than a guess
    ('B300', 'fp64', 1.25, 'NVIDIA HGX B300 datasheet (10 TFLOPS FP64 for 8 GPUs, one eighth)'),
    ('B300', 'fp32', 75.0, 'NVIDIA HGX B300 datasheet (600 TFLOPS FP32 for 8 GPUs, one eighth)'),
    ('B300', 'tf32', 1125.0, 'NVIDIA HGX B300 datasheet (18 PFLOPS TF32 with sparsity for 8 GPUs, one eighth, halved)'),
    ('B300', 'bf16', 2250.0, 'NVIDIA HGX B300 datasheet (36 PFLOPS FP16/BF16 with sparsity for 8 GPUs, one eighth, halved)'),
    ('B300', 'fp16', 2250.0, 'NVIDIA HGX B300 datasheet (36 PFLOPS FP16/BF16 with sparsity for 8 GPUs, one eighth, halved)'),
    ('B300', 'fp8', 4500.0, 'NVIDIA HGX B300 datasheet (72 PFLOPS FP8 with sparsity for 8 GPUs, one eighth, halved)'),
    -- H20: dense figures as NVIDIA's partners publish them
    ('H20', 'fp64', 1.0, 'NVIDIA H20 product brief (as published by NVIDIA partners)'),
    ('H20', 'fp32', 44.0, 'NVIDIA H20 product brief (as published by NVIDIA partners)'),
    ('H20', 'tf32', 74.0, 'NVIDIA H20 product brief (as published by NVIDIA partners, dense)'),
    ('H20', 'bf16', 148.0, 'NVIDIA H20 product brief (as published by NVIDIA partners, dense)'),
    ('H20', 'fp16', 148.0, 'NVIDIA H20 product brief (as published by NVIDIA partners, dense)'),
    ('H20', 'fp8', 296.0, 'NVIDIA H20 product brief (as published by NVIDIA partners, dense)'),
    -- MI355X (CDNA 4 has no TF32 matrix rate: no tf32 row; its FP32 matrix rate is the fp32 roof, as on MI300X)
    ('MI355X', 'fp64', 78.6, 'AMD Instinct MI355X accelerator datasheet (FP64 matrix)'),
    ('MI355X', 'fp32', 157.3, 'AMD Instinct MI355X accelerator datasheet (FP32 matrix)'),
    ('MI355X', 'bf16', 2500.0, 'AMD Instinct MI355X accelerator datasheet (BF16, 2.5 PFLOPS dense)'),
    ('MI355X', 'fp16', 2500.0, 'AMD Instinct MI355X accelerator datasheet (FP16, 2.5 PFLOPS dense)'),
    ('MI355X', 'fp8', 5000.0, 'AMD Instinct MI355X accelerator datasheet (FP8, 5 PFLOPS dense)'),
    ('MI355X', 'fp4', 10000.0, 'AMD Instinct MI355X accelerator datasheet (MXFP4, 10 PFLOPS dense)')
)
-- the three A100 models share one compute sheet, as GH200's two memories do
SELECT m.model, f.peak_class, f.tflops, f.source
FROM figures f JOIN (SELECT DISTINCT model FROM device_models) m
  ON m.model = f.model OR (f.model IN ('A100', 'GH200') AND m.model LIKE f.model || ' %');
