"""The profile document: one assembler for measured, foreign-trace and built-in profiles, their marks
and their verdict. Pure data in, a profile.json dict out: nothing here touches the disk."""
