/** Resource paths and broker addresses of spec 3 §2.3, §2.4 and §4.3. */
export const topicPath = (short: string, topic: string) => `projects/${short}/topics/${topic}`;
export const subscriptionPath = (short: string, topic: string, sub: string) => `${topicPath(short, topic)}/subscriptions/${sub}`;
export const topicPrefix = (short: string) => `persistent://p-${short}/main/`;
export const topicAddress = (short: string, topic: string) => `${topicPrefix(short)}${topic}`;
/** Pulsar's admin path shape for a subscription of a topic. */
export const subscriptionAddress = (short: string, topic: string, sub: string) => `${topicAddress(short, topic)}/subscription/${sub}`;
