"""An ADK agent: the platform's harness loads `root_agent` from this module."""
from google.adk.agents import Agent

root_agent = Agent(
    name="assistant",
    model="gemini-2.0-flash",
    instruction="You are a helpful assistant. Answer briefly.",
)
