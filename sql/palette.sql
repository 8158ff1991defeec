-- palette.sql — the colours of every name a chart draws: one colour per meaning in the HTML report, and
-- the named colour the terminal charts use. A phase, a kernel category, a blame cause and a chart's own
-- marks each have a meaning; names that mean one thing share its colour (the dataload phase and the blame
-- cause that is its time; the gemm category and the gemm/conv causes), and no colour stands for two
-- meanings, so a hue read in one chart means the same in every other (tests/test_report_colors.py holds
-- the palette to that). Python reads it (libreyolo_profile/vocabulary.py); a name not here gets a grey.

-- report_palette: the HTML report's colour of each name, by meaning.
CREATE OR REPLACE TEMP TABLE report_palette (
    -- what the colour stands for, in words (a legend's word for it)
    meaning VARCHAR,
    -- #rrggbb
    colour  VARCHAR,
    -- a phase (sql/phases.sql), kernel category (sql/kernel_categories.sql), blame cause (sql/blame_causes.sql)
    -- or a chart's own mark, as the tables and the report name it
    name    VARCHAR
);
INSERT INTO report_palette VALUES
    -- phases (sql/phases.sql); dataload and optimizer are also a cause and a category of the same work
    ('dataload', '#e8a317', 'dataload'),
    ('to_device', '#9b59b6', 'to_device'),
    ('forward', '#3a7bd5', 'forward'),
    ('backward', '#e0554f', 'backward'),
    ('optimizer', '#23a56f', 'optimizer'),
    ('preprocess', '#c49c94', 'preprocess'),
    ('postprocess', '#8c564b', 'postprocess'),
    -- kernel categories (sql/kernel_categories.sql) and the blame causes that are their time
    ('matrix maths', '#17becf', 'gemm'),
    ('matrix maths', '#17becf', 'gemm_conv'),
    ('matrix maths', '#17becf', 'cpu_gemm_conv'),
    ('elementwise', '#ff7f0e', 'elementwise'),
    ('norm', '#bcbd22', 'norm'),
    ('layout', '#f7b6d2', 'layout'),
    ('reduce', '#c5b0d5', 'reduce'),
    ('copies', '#7f7f7f', 'memcpy'),
    ('copies', '#7f7f7f', 'memcpy_memset'),
    ('memset', '#b4bcc2', 'memset'),
    ('nms/sort', '#dbdb8d', 'nms/sort'),
    ('embedding', '#827717', 'embedding'),
    ('communication', '#8e2c22', 'communication'),
    ('communication', '#8e2c22', 'cpu_communication'),
    ('communication', '#8e2c22', 'rank_transfer'),
    ('other device work', '#aec7e8', 'other'),
    ('other device work', '#aec7e8', 'device_other'),
    -- blame causes of their own (sql/blame_causes.sql)
    ('attention', '#1f4e79', 'attention'),
    ('memory-bound', '#ff9896', 'memory_bound'),
    ('memory-bound', '#ff9896', 'memory_bound_point'),
    ('sync bubble', '#e377c2', 'sync_bubble'),
    ('module loading', '#5b2c83', 'module_loading'),
    ('allocator', '#ffbb78', 'allocator'),
    ('launching', '#98df8a', 'launching'),
    ('cpu work', '#7fd6e0', 'cpu_work'),
    ('unexplained idle', '#e9ecef', 'unexplained_idle'),
    ('cpu other ops', '#4b6b2f', 'cpu_other_ops'),
    ('framework overhead', '#b15928', 'framework_overhead'),
    ('python', '#ad1457', 'python'),
    ('startup', '#00897b', 'startup'),
    -- the charts' own marks: a roofline point above its ridge, a rank's wait and skew, the latency
    -- histogram's bars, the ops table's bar, a step without phases, device time drawn over the phases
    ('compute-bound', '#0b5345', 'compute_bound_point'),
    ('waiting for the last rank', '#ffd92f', 'rank_wait'),
    ('skew between ranks', '#7b1fa2', 'rank_skew'),
    ('calls', '#56657a', 'latency_calls'),
    ('self time share', '#a3b18a', 'op_self_share'),
    ('a step without phases', '#efe3cf', 'no_phases'),
    ('GPU kernel time launched by the step', '#2e2e2e', 'gpu_busy');

-- terminal_palette: the terminal charts' colour of each name they draw (rich's colour names, the nearest
-- to the report's a terminal has), per kind of name: a name of two kinds may differ (the optimizer phase
-- and the optimizer category).
CREATE OR REPLACE TEMP TABLE terminal_palette (
    -- phase | category | cause
    kind   VARCHAR,
    name   VARCHAR,
    -- a rich colour name
    colour VARCHAR
);
INSERT INTO terminal_palette VALUES
    ('phase', 'dataload', 'yellow'),
    ('phase', 'to_device', 'magenta'),
    ('phase', 'forward', 'blue'),
    ('phase', 'backward', 'red'),
    ('phase', 'optimizer', 'green'),
    ('phase', 'preprocess', 'yellow'),
    ('phase', 'postprocess', 'green'),
    ('category', 'gemm', 'blue'),
    ('category', 'elementwise', 'red'),
    ('category', 'norm', 'green'),
    ('category', 'layout', 'yellow'),
    ('category', 'reduce', 'magenta'),
    ('category', 'memcpy', 'grey50'),
    ('category', 'memset', 'grey70'),
    ('category', 'optimizer', 'cyan'),
    ('category', 'nms/sort', 'dark_orange'),
    ('category', 'communication', 'dark_red'),
    ('category', 'other', 'grey50'),
    ('cause', 'gemm_conv', 'blue'),
    ('cause', 'attention', 'cyan'),
    ('cause', 'memory_bound', 'red'),
    ('cause', 'device_other', 'grey50'),
    ('cause', 'communication', 'dark_red'),
    ('cause', 'memcpy_memset', 'grey70'),
    ('cause', 'sync_bubble', 'bright_magenta'),
    ('cause', 'module_loading', 'dark_orange'),
    ('cause', 'allocator', 'orange3'),
    ('cause', 'dataload', 'yellow'),
    ('cause', 'launching', 'bright_green'),
    ('cause', 'cpu_work', 'green'),
    ('cause', 'unexplained_idle', 'grey30'),
    ('cause', 'cpu_gemm_conv', 'blue'),
    ('cause', 'cpu_other_ops', 'cyan'),
    ('cause', 'cpu_communication', 'dark_red'),
    ('cause', 'framework_overhead', 'bright_green');
