"""The writers: `libreyolo profile infer` (measure/infer.py) and `libreyolo profile run`
(measure/train.py) drive the real LibreYOLO model family under torch.profiler, one Chrome trace per
trial, through the one trial loop (measure/trials.py), and hand the captures to the store
(`libreyolo_profile.store.disk.writer.write_profile`). They return where the profile went; the CLI
asks for the report and the summary.

Only this package imports torch and libreyolo.
"""
