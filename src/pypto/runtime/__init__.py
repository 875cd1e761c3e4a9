"""Running a compiled kernel: the control walk and the numeric executors."""
