"""The program IR: tensor values, operations, root-function blocks and the control tree."""
