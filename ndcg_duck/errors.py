"""The one exception type ndcg-duck raises for bad input or bad options."""


class InputError(ValueError):
    """Bad input data or options: the message names the file, column, user or value and says
    what to do. The CLI prints it and exits with status 1 (data) or 2 (usage)."""

    def __init__(self, message: str, *, usage: bool = False):
        super().__init__(message)
        self.usage = usage
