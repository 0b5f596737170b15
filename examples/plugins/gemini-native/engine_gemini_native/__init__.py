"""An engine provider plugin for an API that is not OpenAI-shaped: Gemini's generateContent."""
