"""A CrewAI agent: the platform's harness loads the `crew` from this module and kicks it off."""
from crewai import Agent, Crew, Task

helper = Agent(role="Helper", goal="Answer the user's message", backstory="A concise assistant.")
reply = Task(description="Answer: {message}", expected_output="A short answer", agent=helper)
crew = Crew(agents=[helper], tasks=[reply])
