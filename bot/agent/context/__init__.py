"""What the model sees: the prompt and history built, fitted to the window, with recall and the room."""
