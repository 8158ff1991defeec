"""The writers: `libreyolo profile infer` (measure/infer.py) and `libreyolo profile run`
(measure/train.py) drive the real LibreYOLO model family under torch.profiler, one Chrome trace per
trial, and hand the captures to the store (`libreyolo_profile.store.disk.writer.write_profile`).

Only these modules import torch and libreyolo; readers never do.
"""
