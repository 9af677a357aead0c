import { type Interceptor } from '@grpc/grpc-js';
/** The interceptors that add the trace context: none without OpenTelemetry. */
export declare function traceContext(): Interceptor[];
